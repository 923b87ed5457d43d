// The consumer of a record transport in sonde: a thread that drains the relay
// channel the traced processes write into a ChunkSink (decoded and formatted, or
// stored as a trace). Full sub-buffers go as soon as they fill; when the rings
// are quiet, the committed part of open ones too, so output is never held back
// for long. In overwrite mode (flight recorder) nothing is drained until a dump.
#pragma once

#include "runtime/session/RecordStreams.h"
#include "runtime/transport/RelayChannel.h"
#include "runtime/transport/RelayConsumer.h"

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

namespace sonde::session {

class RecordDrain {
public:
  RecordDrain(const transport::RelayChannel &channel, ChunkSink &sink);
  ~RecordDrain();

  void start();
  // Everything committed so far, now (from the calling thread; the drain
  // thread pauses meanwhile). In overwrite mode: the flight recorder's dump.
  void drainNow();
  // After the producers are gone: everything left, then the thread stops.
  void finish();
  transport::RelayCounters totals() const { return channel_.totals(); }

private:
  void run();
  void round(bool partial);
  void reportLosses();

  const transport::RelayChannel &channel_;
  ChunkSink &sink_;
  transport::RelayConsumer consumer_;
  std::vector<uint64_t> lostSeen_; // per ring: losses already reported
  std::mutex mutex_;               // one drainer at a time
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// The origin a relay chunk names: its ring is the decoder's stream.
RecordOrigin relayOrigin(uint32_t ring, uint64_t owner);

} // namespace sonde::session
