// The consumer half of a record transport in sonde (`--transport=relay`, and
// what -b, -F, -S, --mode and --format imply): the trace clock's calibration,
// the channel the traced processes write, the drain thread, and where decoded
// records go (text, JSON, CTF) or the binary trace directory (-b). It also
// prints the closing transport summary.
#pragma once

#include "runtime/session/LoadedModule.h"
#include "runtime/session/OutputSink.h"
#include "runtime/session/RecordDrain.h"
#include "runtime/session/RecordWriter.h"
#include "runtime/transport/NetlinkChannel.h"
#include "runtime/values/CorruptionLatch.h"

#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>

namespace sonde::session {

enum class OutputFormat { Text, Json, Ctf };

// -s when not given: the netlink socket's queue and the kernel probes' ring
// (memory taken up front), and the relay rings, whose memory is touched only
// as threads write: 4 x 256 KiB per writing thread, so that a busy thread
// wakes the consumer about every 512 KiB (a context switch on both sides).
inline constexpr uint32_t kDefaultBufferMb = 16;
inline constexpr uint32_t kDefaultRelayBufferMb = 64;

struct RecordOptions {
  bool netlink = false;                                    // --transport=netlink, else relay
  transport::RelayMode mode = transport::RelayMode::Block; // --mode; -F: Overwrite
  uint32_t bufferMb = 0;    // -s: all rings together; 0: kDefaultRelayBufferMb or kDefaultBufferMb
  uint32_t subbufSize = 0;  // --subbuf-size (netlink: message bytes); 0: from bufferMb
  uint32_t subbufCount = 0; // --num-subbuf; 0: 4
  OutputFormat format = OutputFormat::Text; // --format
  // -b: records stored as they are in this directory, for `sonde report`.
  std::optional<std::string> traceDirectory;
  // -b without -o: traceDirectory is the name of a new directory to create,
  // with a random suffix if it is taken (the summary names the one made).
  bool newTraceDirectory = false;
  std::optional<std::string> ctfDirectory; // --format=ctf -o DIR
  bool verbose = false;                    // -v: per-ring lines in the summary
  // --lua: the sink that takes the decoded records instead, given the text
  // sink to fall back on and the output both write; null (with a reason) if
  // it cannot start.
  std::function<std::unique_ptr<RecordSink>(const sonde_trace_clock &clock, OutputSink &output,
                                            std::unique_ptr<RecordSink> text, std::string *error)>
      consumer;
};

class StackRecordSink;

class RecordOutput {
public:
  // `text` takes text and JSON output. On failure returns null with a reason.
  static std::unique_ptr<RecordOutput> open(const RecordOptions &options,
                                            const LoadedModule &module, OutputSink &text,
                                            std::string *error);
  ~RecordOutput();

  // What traced processes inherit: the relay memfd or the netlink socket (and
  // its configuration).
  int relayFd() const { return relay_ ? relay_->fd() : -1; }
  int netlinkFd() const { return netlink_ ? netlink_->fd() : -1; }
  std::string netlinkConfig() const { return netlink_ ? netlink_->config().encode() : ""; }
  // For sonde's own handler threads (begin, end, timers).
  const RecordTransport &transport() const { return transport_; }

  void start();
  // Everything committed so far goes out now (before end probes run, so they
  // print after every record of the traced processes). Not in overwrite mode.
  void drainNow();
  // SIGUSR1 with -F: the flight recorder's current contents.
  void dump();
  // The last records, and the output closed. False (said on `err`, naming
  // the file) when writing the output failed.
  bool finish(std::ostream &err);
  // The closing transport summary (records, bytes, MB/s, losses). Records a
  // write error kept from the output count as lost: delivered + lost = fired.
  void summarize(std::ostream &err) const;
  // The first damage found in what traced processes wrote (rings, messages,
  // records), if any: the session ends on it.
  std::optional<std::string> corruption() const;

private:
  RecordOutput() = default;
  bool flightRecorder() const { return options_.mode == transport::RelayMode::Overwrite; }
  // The flight recorder's contents, merged in time order, to the decoded output.
  void dumpMerged();

  RecordOptions options_;
  OutputSink *text_ = nullptr; // text, JSON and Lua output
  std::optional<TraceSchema> schema_;
  std::optional<transport::RelayChannel> relay_;
  std::optional<transport::NetlinkChannel> netlink_;
  RecordTransport transport_;
  std::unique_ptr<RecordSink> records_; // decoded output, unless -b
  std::unique_ptr<ChunkSink> chunks_;   // RecordStreams over records_, or the trace directory
  std::unique_ptr<RecordDrain> drain_;
  RecordStreams *streams_ = nullptr;   // chunks_ when decoding
  StackRecordSink *stacks_ = nullptr;  // in records_ when decoding
  values::CorruptionLatch dumpDamage_; // a flight-recorder dump that did not decode
  uint64_t startNs_ = 0;
};

} // namespace sonde::session
