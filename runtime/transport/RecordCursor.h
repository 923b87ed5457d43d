/* A thread's place in its open relay sub-buffer, as generated code sees it: a
 * printf whose arguments are all numbers appends its record here inline (the
 * record format of RecordCodec.h) instead of calling into the runtime, which
 * takes the other cases (no room, no sub-buffer, text waiting, strings).
 *
 * The relay producer owns it (RelayProducer.h) and keeps `limit` null whenever
 * an inline append would be wrong: no open sub-buffer, one whose first record
 * (which carries the full timestamp) is not written yet, text waiting in the
 * thread's output buffer, or a trace clock that is not the TSC. An inline
 * append then does what the runtime's commit does:
 *
 *   need = SONDE_RECORD_EXTENDED_SIZE + SONDE_RECORD_HEADER_SIZE + 10 per number
 *   if (limit - next >= need)   (signed: a null limit fails)
 *     prefetchw next + SONDE_RECORD_PREFETCH_DISTANCE
 *     t = rdtsc; if (t - stream.last >= SONDE_RECORD_DELTA_LIMIT) an extended record
 *     header, varints; stream.last = t; next = end of record
 *     *used = next - base (store-release); *records += 1
 */
#ifndef SONDE_RUNTIME_TRANSPORT_RECORD_CURSOR_H
#define SONDE_RUNTIME_TRANSPORT_RECORD_CURSOR_H

#include "runtime/transport/RecordCodec.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Writers ask for the line this many bytes ahead of `next` for writing (x86
 * prefetchw). sonde's consumer has read the ring's lines since it last wrapped,
 * from another core; a record store that must first take the line back stalls
 * the thread (+5 ns an event on B1 whenever the two vCPUs sit on different
 * caches of the host). A request 512 bytes ahead has the line owned in time. */
#define SONDE_RECORD_PREFETCH_DISTANCE 512

typedef struct sonde_record_cursor {
  uint8_t *next;              /* where the next record goes */
  uint8_t *limit;             /* inline appends end before it; null: call the runtime */
  sonde_record_stream stream; /* the records' time state (shift 0) */
  uint8_t *base;              /* the open sub-buffer's first byte */
  uint32_t *used;             /* its slot's committed bytes (shared) */
  uint32_t *records;          /* its slot's committed records (shared) */
} sonde_record_cursor;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SONDE_RUNTIME_TRANSPORT_RECORD_CURSOR_H */
