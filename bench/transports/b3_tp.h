/* LTTng-UST tracepoint provider for B3's LTTng row: one 100-byte text array,
 * the record size the Sonde rows send. b3_target.c defines
 * LTTNG_UST_TRACEPOINT_CREATE_PROBES and LTTNG_UST_TRACEPOINT_DEFINE before
 * including it. */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER b3

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./b3_tp.h"

#if !defined(SONDE_B3_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define SONDE_B3_TP_H

#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(b3, record, LTTNG_UST_TP_ARGS(const char *, text),
                           LTTNG_UST_TP_FIELDS(lttng_ust_field_array_text(char, text, text, 100)))

#endif

#include <lttng/tracepoint-event.h>
