// The transport tests' own record framing (the real codec is elsewhere): who
// wrote it, its size, a per-producer sequence number, then `size - 16` filler
// bytes. Written through any producer with reserve()/commit(), checked by
// TestRecordOrder whatever carried it.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

struct TestRecord {
  uint32_t producer;
  uint32_t size;
  uint64_t seq;
};

template <class Producer>
bool writeRecord(Producer &p, uint32_t producer, uint64_t seq, uint32_t size = sizeof(TestRecord)) {
  char *at = p.reserve(size);
  if (!at)
    return false;
  TestRecord rec{producer, size, seq};
  std::memcpy(at, &rec, sizeof rec);
  std::memset(at + sizeof rec, 0x5a, size - sizeof rec);
  p.commit();
  return true;
}

// Checks the records consumers hand over: whole records only (no padding, no
// cut record) and per-producer order (exactly +1, or increasing when losses
// are allowed).
struct TestRecordOrder {
  TestRecordOrder(uint32_t producers, bool gapsAllowed)
      : last(producers, -1), count(producers, 0), gapsAllowed(gapsAllowed) {}

  // Takes one chunk, calling seen(record) for each record; a malformed record
  // is counted and ends the chunk. Returns how many records it held.
  template <class Seen> uint32_t take(const char *data, uint32_t size, Seen seen) {
    uint32_t records = 0;
    while (size > 0) {
      TestRecord rec;
      if (size < sizeof rec) {
        ++malformed;
        return records;
      }
      std::memcpy(&rec, data, sizeof rec);
      if (rec.size < sizeof rec || rec.size > size || rec.producer >= last.size()) {
        ++malformed;
        return records;
      }
      auto seq = int64_t(rec.seq);
      if (gapsAllowed ? seq <= last[rec.producer] : seq != last[rec.producer] + 1)
        ++disorder;
      last[rec.producer] = seq;
      ++count[rec.producer];
      ++delivered;
      ++records;
      seen(rec);
      data += rec.size;
      size -= rec.size;
    }
    return records;
  }

  std::vector<int64_t> last;
  std::vector<uint64_t> count;
  bool gapsAllowed;
  uint64_t delivered = 0, malformed = 0, disorder = 0;
};
