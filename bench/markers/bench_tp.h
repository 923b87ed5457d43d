/* LTTng-UST tracepoint provider for the marker benchmarks: the LTTng rows of
 * B1 (one int, the loop counter) and B2 (one uint64, the xorshift state). One
 * translation unit defines LTTNG_UST_TRACEPOINT_CREATE_PROBES and
 * LTTNG_UST_TRACEPOINT_DEFINE before including it. */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER bench

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./bench_tp.h"

#if !defined(SONDE_BENCH_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define SONDE_BENCH_TP_H

#include <lttng/tracepoint.h>
#include <stdint.h>

LTTNG_UST_TRACEPOINT_EVENT(bench, single_trace, LTTNG_UST_TP_ARGS(int, value),
                           LTTNG_UST_TP_FIELDS(lttng_ust_field_integer(int, value, value)))

LTTNG_UST_TRACEPOINT_EVENT(bench, b2_step, LTTNG_UST_TP_ARGS(uint64_t, state),
                           LTTNG_UST_TP_FIELDS(lttng_ust_field_integer(uint64_t, state, state)))

#endif

#include <lttng/tracepoint-event.h>
