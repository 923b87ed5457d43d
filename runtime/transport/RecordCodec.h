/* The binary record format (architecture.md "Binary records"): what handlers
 * write instead of text, and what the consumer decodes back into printf
 * arguments, so that formatting happens off the event path.
 *
 * A stream (one per producer thread) is a sequence of records, each:
 *   header: u32 little-endian; bits 0-11 the format id, bits 12-31 the
 *           timestamp delta from the stream's previous record, in trace clock
 *           units >> the stream's shift (fixed per stream; 0 by default, which
 *           keeps timestamps exact and covers ~350 us at 3 GHz).
 *   arguments, by the id's descriptor (a list of kinds the encoder and the
 *           decoder share): long = zigzag LEB128 varint (1-10 bytes), string =
 *           varint length then the bytes (no NUL), record time = nothing.
 * Id 0xFFF is the extended record: a header whose delta bits are 0, then the
 * full 64-bit clock reading (u64 little-endian). A stream starts with one, and
 * the encoder writes one before any record whose delta does not fit (or whose
 * clock went backwards), so every record's timestamp is recoverable:
 *   timestamp = ((last >> shift) + delta) << shift, exact when shift is 0.
 * Nothing here allocates, locks or does I/O. */
#ifndef SONDE_RUNTIME_TRANSPORT_RECORD_CODEC_H
#define SONDE_RUNTIME_TRANSPORT_RECORD_CODEC_H

#include "runtime/format/FormatAbi.h"
#include "runtime/transport/TraceClock.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SONDE_RECORD_ID_BITS 12
#define SONDE_RECORD_EXTENDED_ID 0xFFFu /* reserved: the full-timestamp record */
#define SONDE_RECORD_MAX_ID 0xFFEu
#define SONDE_RECORD_DELTA_LIMIT (1u << 20) /* deltas must be below this */
#define SONDE_RECORD_HEADER_SIZE 4
#define SONDE_RECORD_EXTENDED_SIZE 12 /* header + u64 reading */
#define SONDE_RECORD_VARINT_MAX 10

/* How an argument travels. */
enum sonde_record_arg_kind {
  SONDE_RECORD_ARG_LONG = 0,   /* SondeFormatArg.i as a zigzag varint */
  SONDE_RECORD_ARG_STRING = 1, /* SondeFormatArg.s (NUL-terminated) as length + bytes */
  SONDE_RECORD_ARG_TIME = 2,   /* nothing: decodes as the record's CLOCK_REALTIME ns */
};

/* The arguments of one format id: `count` kinds, one per SondeFormatArg the
 * format consumes (sonde_format_arg_count). */
typedef struct sonde_record_desc {
  const uint8_t *kinds; /* sonde_record_arg_kind */
  uint32_t count;
} sonde_record_desc;

/* The time state both ends keep per stream. Zero-initialise it, then set shift;
 * sonde_record_stream_restart() makes the next record start with a full
 * timestamp again (e.g. at each sub-buffer, so one decodes on its own). */
typedef struct sonde_record_stream {
  uint64_t last;    /* the previous record's reading >> shift */
  uint32_t shift;   /* fixed for the stream's life */
  uint32_t started; /* 0 until the first extended record */
} sonde_record_stream;

static inline void sonde_record_stream_restart(sonde_record_stream *stream) { stream->started = 0; }

/* ---- encoder (the handler side) ---- */

/* The most sonde_record_encode() writes for these arguments (an extended record
 * included): what to reserve before encoding. */
size_t sonde_record_max_size(const sonde_record_desc *desc, const SondeFormatArg *args);

/* Writes the record for format `id` (at most SONDE_RECORD_MAX_ID) stamped with
 * clock reading `reading` into out, preceded by an extended record when the
 * stream needs one; returns the bytes written (0, writing nothing, for an id
 * out of range). `out` holds at least sonde_record_max_size() bytes. */
size_t sonde_record_encode(sonde_record_stream *stream, uint32_t id, uint64_t reading,
                           const sonde_record_desc *desc, const SondeFormatArg *args, uint8_t *out);

/* ---- decoder (the consumer side) ---- */

enum sonde_record_status {
  SONDE_RECORD_EVENT = 0,     /* a record of a format id: *record and args filled */
  SONDE_RECORD_CLOCK = 1,     /* an extended record: the stream's time was set */
  SONDE_RECORD_TRUNCATED = 2, /* the bytes end inside the record */
  SONDE_RECORD_UNKNOWN_ID = 3,
  SONDE_RECORD_MALFORMED = 4, /* bad varint, or an event before any full timestamp */
  SONDE_RECORD_NO_ROOM = 5,   /* args or scratch too small */
};

/* What a stream is decoded with. */
typedef struct sonde_record_decoder {
  sonde_record_stream stream;
  const sonde_trace_clock *clock; /* converts record times (needed for time args) */
  const sonde_record_desc *descs; /* indexed by format id */
  uint32_t desc_count;
} sonde_record_decoder;

typedef struct sonde_decoded_record {
  uint64_t reading; /* the record's full clock reading */
  uint32_t id;      /* format id; SONDE_RECORD_EXTENDED_ID for a clock record */
  uint32_t size;    /* bytes the record took */
  uint32_t arg_count;
} sonde_decoded_record;

/* Decodes the record at in[0, len). For an event, fills args[0, arg_count) as
 * the format consumes them; strings are copied NUL-terminated into scratch,
 * which needs at most `len` + arg_count bytes. The stream's state advances only
 * when the status is SONDE_RECORD_EVENT or SONDE_RECORD_CLOCK. */
int sonde_record_decode(sonde_record_decoder *decoder, const uint8_t *in, size_t len,
                        SondeFormatArg *args, size_t arg_cap, char *scratch, size_t scratch_cap,
                        sonde_decoded_record *record);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SONDE_RUNTIME_TRANSPORT_RECORD_CODEC_H */
