// The reader of a netlink channel: one thread in sonde. It receives every queued
// message without blocking, checks it (malformed ones are counted and skipped),
// and hands the sink each batch with its stream's identity; records are opaque
// bytes, whole and in the order their producer wrote them.
#pragma once

#include "runtime/transport/NetlinkChannel.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <tuple>
#include <vector>

namespace sonde::transport {

// One producer thread's stream: unique across processes and over time.
struct NetlinkStreamId {
  uint32_t pid = 0;
  uint32_t tid = 0;
  uint32_t generation = 0;
  // (pid << 32) | tid, as RelayRingHeader::owner names a thread.
  uint64_t thread() const { return (uint64_t(pid) << 32) | tid; }
  auto operator<=>(const NetlinkStreamId &) const = default;
};

// One delivered message. `records` may be 0 (a final message reporting losses).
struct NetlinkBatch {
  NetlinkStreamId stream;
  uint64_t seq;     // the stream's message number
  uint32_t records; // whole records in data
  uint64_t lost;    // records the stream lost just before these
  const char *data;
  uint32_t size;
};

struct NetlinkTotals {
  uint64_t recordsDelivered = 0;
  uint64_t recordsLost = 0;     // the sum of the messages' `lost`
  uint64_t bytes = 0;           // record bytes delivered
  uint64_t messages = 0;        // well-formed messages
  uint64_t malformed = 0;       // bad size, magic, version or type; or a repeated sequence number
  uint64_t missingMessages = 0; // sequence gaps: messages the kernel dropped (records unknown)
  uint64_t overruns = 0;        // ENOBUFS from the socket: the kernel dropped messages
};

class NetlinkConsumer {
public:
  using Sink = std::function<void(const NetlinkBatch &batch)>;

  explicit NetlinkConsumer(const NetlinkChannel &channel);

  // Every queued message, without blocking. Returns the number of sink calls.
  size_t poll(const Sink &sink);
  // Sleeps until a message is queued, at most timeoutNs. Returns whether one is.
  bool wait(uint64_t timeoutNs);

  const NetlinkTotals &totals() const { return totals_; }
  // Records lost by one stream so far (its messages' `lost`).
  uint64_t streamLost(const NetlinkStreamId &stream) const;

private:
  bool accept(uint32_t length, NetlinkBatch *batch);

  struct StreamState {
    uint64_t nextSeq = 0;
    uint64_t lost = 0;
  };

  const NetlinkChannel &channel_;
  std::vector<char> buffer_;
  std::map<NetlinkStreamId, StreamState> streams_;
  NetlinkTotals totals_;
};

} // namespace sonde::transport
