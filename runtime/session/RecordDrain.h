// The consumer of a record transport in sonde: a thread that drains what the
// traced processes (and sonde's own handlers) write into a ChunkSink (decoded
// and formatted, or stored as a trace).
// - relay: full sub-buffers go as soon as they fill; when the rings are quiet,
//   the committed part of open ones too, so output is never held back for long.
//   In overwrite mode (flight recorder) nothing is drained until a dump.
// - netlink: every queued message, as it arrives.
#pragma once

#include "runtime/session/RecordStreams.h"
#include "runtime/transport/NetlinkConsumer.h"
#include "runtime/transport/RelayChannel.h"
#include "runtime/transport/RelayConsumer.h"

#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace sonde::session {

// A transport's counters, whichever it is.
struct TransportTotals {
  uint64_t records = 0, lost = 0, overwritten = 0, bytes = 0;
  uint64_t malformedMessages = 0; // netlink: messages that were not ours, or cut
};

class RecordDrain {
public:
  RecordDrain(const transport::RelayChannel &channel, ChunkSink &sink);
  RecordDrain(const transport::NetlinkChannel &channel, ChunkSink &sink);
  ~RecordDrain();

  void start();
  // Everything committed so far, now (from the calling thread; the drain
  // thread pauses meanwhile). In overwrite mode: the flight recorder's dump.
  void drainNow();
  // Relay overwrite mode: the rings' recent sub-buffers, to `sink` instead.
  void dumpRecent(const transport::RelayConsumer::Sink &sink);
  // After the producers are gone: everything left, then the thread stops.
  // Netlink losses that no message reported (NetlinkChannel::lossCounter) go
  // to the sink as losses of no known thread (pid and tid 0).
  void finish();
  TransportTotals totals() const;
  // The first damage the consumer found in the rings or messages, if any.
  std::optional<std::string> corruption() const;

private:
  void run();
  void round(bool partial);
  void reportRelayLosses();
  uint64_t netlinkLost() const;
  RecordOrigin netlinkOrigin(const transport::NetlinkStreamId &id);

  const transport::RelayChannel *relay_ = nullptr;
  const transport::NetlinkChannel *netlink_ = nullptr;
  ChunkSink &sink_;
  std::optional<transport::RelayConsumer> relayConsumer_;
  std::optional<transport::NetlinkConsumer> netlinkConsumer_;
  std::vector<uint64_t> lostSeen_; // relay, per ring: losses already reported
  std::map<transport::NetlinkStreamId, uint64_t> netlinkStreams_; // -> decoder stream
  std::mutex mutex_;                                              // one drainer at a time
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// The origin a relay chunk names: its ring is the decoder's stream.
RecordOrigin relayOrigin(uint32_t ring, uint64_t owner);

} // namespace sonde::session
