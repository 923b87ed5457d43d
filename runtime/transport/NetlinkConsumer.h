// The reader of a netlink channel: one thread in sonde. It receives every queued
// message without blocking, checks it (malformed ones are counted and skipped),
// and hands the sink each batch with its stream's identity; records are opaque
// bytes, whole and in the order their producer wrote them.
//
// Only messages from the channel's own sending socket (the one traced processes
// inherit) are taken; others are counted malformed. A malformed message from
// that socket, or more streams than kMaxNetlinkStreams, means a traced process
// wrote garbage on it: the damage is noted (corruption()) for the session to
// end on, and the message skipped.
#pragma once

#include "runtime/transport/NetlinkChannel.h"
#include "runtime/values/CorruptionLatch.h"

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

// More producer streams than this is no traced process's doing.
inline constexpr size_t kMaxNetlinkStreams = 1 << 16;

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
  // The first damage found in what the traced processes sent, if any.
  const values::CorruptionLatch &corruption() const { return corruption_; }

private:
  bool accept(uint32_t length, NetlinkBatch *batch);

  struct StreamState {
    uint64_t nextSeq = 0;
    uint64_t lost = 0;
  };

  const NetlinkChannel &channel_;
  uint32_t senderPort_ = 0; // the sending socket's port: where every message comes from
  std::vector<char> buffer_;
  std::map<NetlinkStreamId, StreamState> streams_;
  NetlinkTotals totals_;
  values::CorruptionLatch corruption_;
};

} // namespace sonde::transport
