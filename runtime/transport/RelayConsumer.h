// The reader of a relay channel: one thread in sonde. It hands the sink each
// ring's committed bytes (whole records, back to back, in the order the ring's
// producer wrote them; never padding) and frees sub-buffers for the producers.
//
// The rings are writable by every traced process, so what it reads there is
// checked first: the header's static fields against the channel's own copy, a
// producer's sub-buffer number against the consumer's own (never more than the
// ring holds ahead), each slot's number, byte count and writer. A ring that fails is
// damaged: it is never read again, and the damage is noted (corruption()) for
// the session to end on; what was handed over before stays as it was.
#pragma once

#include "runtime/transport/RelayChannel.h"
#include "runtime/values/CorruptionLatch.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
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
  // The first damage found in the channel, if any.
  const values::CorruptionLatch &corruption() const { return corruption_; }
  // At the end (producers may be gone): full and partly filled sub-buffers of
  // every ring. In overwrite mode, the same as dumpRecent().
  size_t flushAll(const Sink &sink);
  // Overwrite mode: the sub-buffers each ring still holds, oldest first,
  // copied while producers may still write (a sub-buffer overwritten during the
  // copy is skipped). After the producers are gone, what it hands over and
  // what the rings count overwritten add up to what they count written.
  size_t dumpRecent(const Sink &sink);

private:
  size_t drainRing(uint32_t r, bool partial, const Sink &sink);
  void releaseSubbuf(uint32_t r, uint32_t next);
  bool anyFull() const;
  // False (and every ring damaged) once the header's static fields changed.
  bool headerIntact();
  // Notes damage of ring r and stops reading it.
  void damage(uint32_t r, const std::string &what);
  // What a slot says of its sub-buffer, checked: its committed bytes and the
  // thread that wrote them; nullopt (damage noted) when either is impossible.
  struct SlotView {
    uint32_t used;
    uint64_t owner;
  };
  std::optional<SlotView> readSlot(uint32_t r, uint32_t subbuf, const RelaySlotHeader &s);

  const RelayChannel &channel_;
  std::vector<uint32_t> tail_;       // per ring: the next sub-buffer to read (ours, not shared)
  std::vector<uint32_t> readOffset_; // per ring: bytes of sub-buffer `tail` already read
  std::vector<uint8_t> damaged_;     // per ring: never read again
  bool headerDamaged_ = false;
  std::vector<char> copy_;
  values::CorruptionLatch corruption_;
};

} // namespace sonde::transport
