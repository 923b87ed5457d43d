// A relay channel: per-thread rings of fixed-size sub-buffers in one shared-memory
// region (a sealed memfd). sonde creates it; each target attaches from the fd, at
// whatever address. Records are opaque bytes (their framing is the codec's job):
// RelayProducer writes them, RelayConsumer reads them back per ring, in order.
#pragma once

#include "runtime/transport/RelayFormat.h"
#include "runtime/values/SharedMapping.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace sonde::transport {

struct RelayConfig {
  RelayMode mode = RelayMode::Block;
  uint32_t subbufSize = 64 * 1024; // power of two, at least 64
  uint32_t subbufCount = 8;        // per ring, power of two, at least 2
  uint32_t ringCount = 16;         // producers (threads) that can write at once
  uint64_t blockTimeoutNs = 1'000'000'000;
};

struct RelayCounters {
  uint64_t recordsWritten = 0;
  uint64_t recordsLost = 0;        // dropped: no room, no ring, or too large
  uint64_t recordsOverwritten = 0; // overwrite mode: replaced by newer records
  uint64_t bytesWritten = 0;
};

class RelayChannel {
public:
  static std::optional<RelayChannel> create(const RelayConfig &config, std::string *error);
  // Maps an existing channel from its fd (the fd stays owned by the caller).
  static std::optional<RelayChannel> attach(int fd, std::string *error);

  RelayChannel(RelayChannel &&) noexcept = default;
  RelayChannel &operator=(RelayChannel &&) noexcept = default;

  // The memfd (create) or -1 (attach).
  int fd() const { return mapping_.fd(); }
  uint64_t size() const { return mapping_.size(); }
  // The shared header: only its dynamic fields (wake-ups, stall flag, losses
  // without a ring) are read there; the geometry below is this mapping's own
  // copy, taken at create() or checked at attach(), since every process that
  // maps the channel can write the header.
  RelayHeader &header() const { return *static_cast<RelayHeader *>(mapping_.base()); }
  const RelayConfig &config() const { return config_; }
  RelayMode mode() const { return config_.mode; }
  uint32_t ringCount() const { return config_.ringCount; }
  uint32_t subbufSize() const { return config_.subbufSize; }
  uint32_t subbufCount() const { return config_.subbufCount; }
  // The header's static fields still as this mapping knows them: null, or
  // the name of the first one overwritten.
  const char *overwrittenHeaderField() const;
  RelayRingHeader &ring(uint32_t r) const;
  RelaySlotHeader &slot(uint32_t r, uint32_t subbuf) const;
  char *slotData(uint32_t r, uint32_t subbuf) const;

  // Claims a ring for the calling thread: a free one, else one whose owner thread
  // died. Returns the ring index, or -1 when every ring has a live owner.
  int claimRing() const;
  // Frees a ring claimed by the calling thread.
  void releaseRing(uint32_t r) const;

  RelayCounters ringCounters(uint32_t r) const;
  // All rings, plus records lost for want of a ring.
  RelayCounters totals() const;

private:
  RelayChannel(values::SharedMapping mapping, const RelayConfig &config);

  values::SharedMapping mapping_;
  RelayConfig config_;
  uint64_t ringsOffset_, slotsOffset_, dataOffset_, slotStride_;
};

} // namespace sonde::transport
