// The consumer of the relay transport in sonde: a thread that drains the rings
// of the traced processes, decodes each record (runtime/transport/RecordCodec)
// and writes its text: printf records formatted here, off the event path, text
// records as they are. Per-ring order is the order each thread wrote.
#pragma once

#include "runtime/session/LoadedModule.h"
#include "runtime/session/OutputSink.h"
#include "runtime/session/RecordFormats.h"
#include "runtime/transport/RelayChannel.h"
#include "runtime/transport/RelayConsumer.h"

#include <atomic>
#include <thread>
#include <vector>

namespace sonde::session {

class RelayDrain {
public:
  RelayDrain(const transport::RelayChannel &channel, const LoadedModule &module,
             const RecordFormats &records, OutputSink &output, int errorFd);
  ~RelayDrain();

  void start();
  // After the producers are gone (agents detached): everything left, then stop.
  void finish();
  // Records that reached no ring, or were dropped, by the transport's count.
  transport::RelayCounters totals() const { return channel_.totals(); }
  // Records the consumer could not decode.
  uint64_t malformed() const { return malformed_; }

private:
  void run();
  void consume(uint32_t ring, const char *data, uint32_t size);

  const transport::RelayChannel &channel_;
  const LoadedModule &module_;
  const RecordFormats &records_;
  OutputSink &output_;
  int errorFd_;
  transport::RelayConsumer consumer_;
  std::vector<sonde_record_decoder> decoders_; // one per ring
  sonde_trace_clock clock_{};
  std::vector<SondeFormatArg> args_;
  std::vector<char> scratch_;
  OutputBuffer pending_; // formatted text, written once per drain round
  std::atomic<bool> stop_{false};
  std::thread thread_;
  uint64_t malformed_ = 0;
};

} // namespace sonde::session
