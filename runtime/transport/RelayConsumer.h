// The reader of a relay channel: one thread in sonde. It hands the sink each
// ring's committed bytes (whole records, back to back, in the order the ring's
// producer wrote them; never padding) and frees sub-buffers for the producers.
#pragma once

#include "runtime/transport/RelayChannel.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace sonde::transport {

// Committed records of one sub-buffer (or the part not read before).
struct RelayChunk {
  uint32_t ring;
  uint64_t owner; // (pid << 32) | tid of the thread that wrote them
  const char *data;
  uint32_t size;
};

class RelayConsumer {
public:
  using Sink = std::function<void(const RelayChunk &chunk)>;

  explicit RelayConsumer(const RelayChannel &channel);

  // Block and discard modes: every full sub-buffer, then released. Returns the
  // number of sink calls.
  size_t poll(const Sink &sink);
  // Sleeps until a producer hands over a sub-buffer, at most timeoutNs. Returns
  // whether one is waiting.
  bool wait(uint64_t timeoutNs);
  // At the end (producers may be gone): full and partly filled sub-buffers of
  // every ring. In overwrite mode, the same as dumpRecent().
  size_t flushAll(const Sink &sink);
  // Overwrite mode: the most recent sub-buffers of each ring, oldest first,
  // copied while producers may still write (a sub-buffer overwritten during the
  // copy is skipped).
  size_t dumpRecent(const Sink &sink);

private:
  size_t drainRing(uint32_t r, bool partial, const Sink &sink);
  void releaseSubbuf(RelayRingHeader &ring, uint32_t next);
  bool anyFull() const;

  const RelayChannel &channel_;
  std::vector<uint32_t> readOffset_; // per ring: bytes of sub-buffer `tail` already read
  std::vector<char> copy_;
};

} // namespace sonde::transport
