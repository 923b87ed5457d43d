// Encoding and decoding of binary records (RecordCodec.h).
#include "runtime/transport/RecordCodec.h"

#include <cstring>

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "records are written little-endian");

namespace {

constexpr uint32_t kIdMask = (1u << SONDE_RECORD_ID_BITS) - 1;

uint64_t zigzag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}

int64_t unzigzag(uint64_t v) { return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1); }

size_t varintSize(uint64_t v) {
  size_t n = 1;
  for (; v >= 0x80; v >>= 7)
    ++n;
  return n;
}

uint8_t *putVarint(uint8_t *out, uint64_t v) {
  for (; v >= 0x80; v >>= 7)
    *out++ = static_cast<uint8_t>(v | 0x80);
  *out++ = static_cast<uint8_t>(v);
  return out;
}

uint8_t *putHeader(uint8_t *out, uint32_t id, uint32_t delta) {
  const uint32_t header = id | (delta << SONDE_RECORD_ID_BITS);
  std::memcpy(out, &header, sizeof header);
  return out + sizeof header;
}

// Reads a varint from [in, end); nullptr when it is cut short or longer than
// 64 bits.
const uint8_t *getVarint(const uint8_t *in, const uint8_t *end, uint64_t *v, bool *truncated) {
  uint64_t value = 0;
  for (unsigned shift = 0; shift < 64; shift += 7) {
    if (in == end) {
      *truncated = true;
      return nullptr;
    }
    const uint8_t byte = *in++;
    if (shift == 63 && byte > 1)
      return nullptr;
    value |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      *v = value;
      return in;
    }
  }
  return nullptr;
}

// Decodes the arguments of `desc` from [in, end) into args and scratch.
int decodeArgs(const sonde_record_desc &desc, const uint8_t *in, const uint8_t *end,
               int64_t recordTimeNs, SondeFormatArg *args, char *scratch, size_t scratchCap,
               const uint8_t **next) {
  size_t used = 0;
  for (uint32_t i = 0; i < desc.count; ++i) {
    if (desc.kinds[i] == SONDE_RECORD_ARG_TIME) {
      args[i].i = recordTimeNs;
      continue;
    }
    uint64_t v = 0;
    bool truncated = false;
    in = getVarint(in, end, &v, &truncated);
    if (in == nullptr)
      return truncated ? SONDE_RECORD_TRUNCATED : SONDE_RECORD_MALFORMED;
    if (desc.kinds[i] == SONDE_RECORD_ARG_LONG) {
      args[i].i = unzigzag(v);
      continue;
    }
    if (desc.kinds[i] != SONDE_RECORD_ARG_STRING)
      return SONDE_RECORD_MALFORMED;
    if (v > static_cast<uint64_t>(end - in))
      return SONDE_RECORD_TRUNCATED;
    if (v + 1 > scratchCap - used)
      return SONDE_RECORD_NO_ROOM;
    std::memcpy(scratch + used, in, v);
    scratch[used + v] = '\0';
    args[i].s = scratch + used;
    used += v + 1;
    in += v;
  }
  *next = in;
  return SONDE_RECORD_EVENT;
}

} // namespace

extern "C" {

size_t sonde_record_max_size(const sonde_record_desc *desc, const SondeFormatArg *args) {
  size_t size = SONDE_RECORD_EXTENDED_SIZE + SONDE_RECORD_HEADER_SIZE;
  for (uint32_t i = 0; i < desc->count; ++i) {
    switch (desc->kinds[i]) {
    case SONDE_RECORD_ARG_LONG: size += SONDE_RECORD_VARINT_MAX; break;
    case SONDE_RECORD_ARG_STRING: {
      const size_t len = std::strlen(args[i].s);
      size += varintSize(len) + len;
      break;
    }
    default: break;
    }
  }
  return size;
}

size_t sonde_record_encode(sonde_record_stream *stream, uint32_t id, uint64_t reading,
                           const sonde_record_desc *desc, const SondeFormatArg *args,
                           uint8_t *out) {
  if (id > SONDE_RECORD_MAX_ID)
    return 0;
  uint8_t *p = out;
  const uint64_t now = reading >> stream->shift;
  uint64_t delta = now - stream->last;
  if (stream->started == 0 || now < stream->last || delta >= SONDE_RECORD_DELTA_LIMIT) {
    p = putHeader(p, SONDE_RECORD_EXTENDED_ID, 0);
    std::memcpy(p, &reading, sizeof reading);
    p += sizeof reading;
    stream->started = 1;
    delta = 0;
  }
  stream->last = now;
  p = putHeader(p, id, static_cast<uint32_t>(delta));
  for (uint32_t i = 0; i < desc->count; ++i) {
    switch (desc->kinds[i]) {
    case SONDE_RECORD_ARG_LONG: p = putVarint(p, zigzag(args[i].i)); break;
    case SONDE_RECORD_ARG_STRING: {
      const size_t len = std::strlen(args[i].s);
      p = putVarint(p, len);
      std::memcpy(p, args[i].s, len);
      p += len;
      break;
    }
    default: break;
    }
  }
  return static_cast<size_t>(p - out);
}

int sonde_record_decode(sonde_record_decoder *decoder, const uint8_t *in, size_t len,
                        SondeFormatArg *args, size_t arg_cap, char *scratch, size_t scratch_cap,
                        sonde_decoded_record *record) {
  if (len < SONDE_RECORD_HEADER_SIZE)
    return SONDE_RECORD_TRUNCATED;
  uint32_t header;
  std::memcpy(&header, in, sizeof header);
  const uint32_t id = header & kIdMask;
  const uint32_t delta = header >> SONDE_RECORD_ID_BITS;
  sonde_record_stream &stream = decoder->stream;

  if (id == SONDE_RECORD_EXTENDED_ID) {
    if (len < SONDE_RECORD_EXTENDED_SIZE)
      return SONDE_RECORD_TRUNCATED;
    if (delta != 0)
      return SONDE_RECORD_MALFORMED;
    uint64_t reading;
    std::memcpy(&reading, in + SONDE_RECORD_HEADER_SIZE, sizeof reading);
    stream.last = reading >> stream.shift;
    stream.started = 1;
    *record = {reading, id, SONDE_RECORD_EXTENDED_SIZE, 0};
    return SONDE_RECORD_CLOCK;
  }

  if (stream.started == 0)
    return SONDE_RECORD_MALFORMED;
  if (id >= decoder->desc_count)
    return SONDE_RECORD_UNKNOWN_ID;
  const sonde_record_desc &desc = decoder->descs[id];
  if (desc.count > arg_cap)
    return SONDE_RECORD_NO_ROOM;
  const uint64_t now = stream.last + delta;
  const uint64_t reading = now << stream.shift;
  const int64_t timeNs = sonde_trace_clock_to_realtime_ns(decoder->clock, reading);
  const uint8_t *next = nullptr;
  const int status = decodeArgs(desc, in + SONDE_RECORD_HEADER_SIZE, in + len, timeNs, args,
                                scratch, scratch_cap, &next);
  if (status != SONDE_RECORD_EVENT)
    return status;
  stream.last = now;
  *record = {reading, id, static_cast<uint32_t>(next - in), desc.count};
  return SONDE_RECORD_EVENT;
}

} // extern "C"
