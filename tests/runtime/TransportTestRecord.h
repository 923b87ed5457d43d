// The transport tests' own record framing (the real codec is elsewhere): who
// wrote it, its size, a per-producer sequence number, then `size - 16` filler
// bytes. Written through any producer with reserve()/commit().
#pragma once

#include <cstdint>
#include <cstring>

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
