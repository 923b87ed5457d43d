#include "runtime/session/RecordOutput.h"

#include "runtime/session/CtfRecordSink.h"
#include "runtime/session/JsonRecordSink.h"
#include "runtime/session/RecordMerger.h"
#include "runtime/session/StackRecordSink.h"
#include "runtime/session/TextRecordSink.h"
#include "runtime/session/TraceDirectory.h"
#include "runtime/transport/SharedFutex.h"

#include <algorithm>
#include <map>
#include <ostream>
#include <unistd.h>

namespace sonde::session {

namespace {

// -s MB (kDefaultRelayBufferMb) over 64 rings (threads writing at once) of 4
// sub-buffers each, of 4 KiB to 1 MiB. With the sub-buffer geometry given, -s
// sets how many rings (1 to 64) fit.
transport::RelayConfig relayConfig(const RecordOptions &o) {
  transport::RelayConfig c;
  c.mode = o.mode;
  c.ringCount = 64;
  c.subbufCount = o.subbufCount ? o.subbufCount : 4;
  uint64_t total = uint64_t{o.bufferMb ? o.bufferMb : kDefaultRelayBufferMb} << 20;
  if (o.subbufSize) {
    c.subbufSize = o.subbufSize;
    uint64_t rings = total / (uint64_t{c.subbufSize} * c.subbufCount);
    c.ringCount = static_cast<uint32_t>(std::clamp<uint64_t>(rings, 1, 64));
    return c;
  }
  uint64_t perSubbuf = total / (c.ringCount * c.subbufCount);
  c.subbufSize = 4096;
  while (c.subbufSize * 2 <= perSubbuf && c.subbufSize < (1u << 20))
    c.subbufSize *= 2;
  return c;
}

const char *modeName(transport::RelayMode m) {
  switch (m) {
  case transport::RelayMode::Block: return "block";
  case transport::RelayMode::Discard: return "discard";
  case transport::RelayMode::Overwrite: return "overwrite";
  }
  return "?";
}

void warnLine(const std::string &text) {
  std::string line = "sonde: WARNING: " + text + "\n";
  (void)!write(STDERR_FILENO, line.data(), line.size());
}

} // namespace

std::unique_ptr<RecordOutput> RecordOutput::open(const RecordOptions &options,
                                                 const LoadedModule &module, OutputSink &text,
                                                 std::string *error) {
  std::unique_ptr<RecordOutput> out(new RecordOutput());
  out->options_ = options;
  out->text_ = &text;
  out->schema_.emplace(TraceSchema::fromModule(module));
  sonde_trace_clock &clock = out->transport_.clock;
  sonde_trace_clock_calibrate(&clock, 0, 0);
  if (options.netlink) {
    transport::NetlinkConfig config;
    config.mode = options.mode;
    config.bufferBytes = uint64_t{options.bufferMb ? options.bufferMb : kDefaultBufferMb} << 20;
    if (options.subbufSize)
      config.messageBytes = options.subbufSize;
    out->netlink_ = transport::NetlinkChannel::create(config, error);
    if (!out->netlink_)
      return nullptr;
    out->transport_.netlink = &*out->netlink_;
  } else {
    out->relay_ = transport::RelayChannel::create(relayConfig(options), error);
    if (!out->relay_)
      return nullptr;
    out->transport_.relay = &*out->relay_;
  }
  out->transport_.schema = &*out->schema_;

  if (options.traceDirectory) {
    std::unique_ptr<TraceDirectoryWriter> trace =
        options.newTraceDirectory
            ? TraceDirectoryWriter::create(*options.traceDirectory, *out->schema_, clock, error)
            : TraceDirectoryWriter::open(*options.traceDirectory, *out->schema_, clock, error);
    if (!trace)
      return nullptr;
    out->options_.traceDirectory = trace->path();
    out->chunks_ = std::move(trace);
  } else {
    if (options.format == OutputFormat::Ctf) {
      out->records_ = CtfRecordSink::open(*options.ctfDirectory, *out->schema_, clock, error);
      if (!out->records_)
        return nullptr;
    } else if (options.format == OutputFormat::Json) {
      out->records_ = std::make_unique<JsonRecordSink>(
          clock, [&text](const char *data, size_t n) { return text.write(data, n); });
    } else {
      out->records_ = std::make_unique<TextRecordSink>(text);
    }
    if (options.consumer) {
      out->records_ = options.consumer(clock, text, std::move(out->records_), error);
      if (!out->records_)
        return nullptr;
    }
    // A stack record lists at most MAXBACKTRACE addresses, or the words of a
    // print_ustack() string.
    const sonde_limits &limits = module.layout().limits();
    auto stacks = std::make_unique<StackRecordSink>(
        *out->schema_, std::move(out->records_),
        std::max<size_t>(limits.max_backtrace, limits.max_string_len));
    out->stacks_ = stacks.get();
    out->records_ = std::move(stacks);
    auto streams = std::make_unique<RecordStreams>(*out->schema_, clock, *out->records_, warnLine);
    out->streams_ = streams.get();
    out->chunks_ = std::move(streams);
  }
  out->drain_ = out->relay_ ? std::make_unique<RecordDrain>(*out->relay_, *out->chunks_)
                            : std::make_unique<RecordDrain>(*out->netlink_, *out->chunks_);
  return out;
}

RecordOutput::~RecordOutput() = default;

void RecordOutput::start() {
  startNs_ = transport::monotonicNs();
  drain_->start();
}

void RecordOutput::drainNow() {
  if (!flightRecorder())
    drain_->drainNow();
}

void RecordOutput::dump() {
  if (streams_)
    dumpMerged();
  else
    drain_->drainNow(); // -b: stored as they are; `sonde report` merges them
}

void RecordOutput::dumpMerged() {
  std::map<uint32_t, MergedStream> rings;
  drain_->dumpRecent([&](const transport::RelayChunk &c) {
    MergedStream &s = rings[c.ring];
    if (!s.frames) {
      s.origin = relayOrigin(c.ring, c.owner);
      s.frames = std::make_unique<MemoryFrames>("ring " + std::to_string(c.ring));
    }
    static_cast<MemoryFrames &>(*s.frames).add(c.data, c.size);
  });
  std::vector<MergedStream> streams;
  for (auto &[ring, s] : rings)
    streams.push_back(std::move(s));
  std::string error;
  // Producers write only whole records: what does not decode was written over.
  auto damaged = [this](const std::string &what) {
    warnLine(what);
    dumpDamage_.note("relay " + what.substr(0, what.find("; skipping")));
  };
  mergeRecordStreams(streams, *schema_, transport_.clock, *records_, damaged, &error);
  records_->flush();
}

bool RecordOutput::finish(std::ostream &err) {
  if (flightRecorder() && streams_)
    dumpMerged(); // the drain has nothing to add: it never reads these rings
  else
    drain_->finish();
  std::string error;
  bool ok = chunks_->close(&error);
  if (!ok)
    err << "sonde: " << error << "\n";
  // Text, JSON and a --lua script's output go through the text sink.
  text_->close();
  if (std::string failure = text_->failure(); !failure.empty()) {
    err << "sonde: ERROR: " << failure << "\n";
    ok = false;
  }
  if (std::string rotation = text_->rotationFailure(); !rotation.empty())
    err << "sonde: WARNING: -S: " << rotation << "\n";
  return ok;
}

std::optional<std::string> RecordOutput::corruption() const {
  if (std::optional<std::string> found = drain_->corruption())
    return found;
  if (streams_ && streams_->corruption().tripped())
    return streams_->corruption().what();
  if (stacks_ && stacks_->corruption().tripped())
    return stacks_->corruption().what();
  if (dumpDamage_.tripped())
    return dumpDamage_.what();
  return std::nullopt;
}

// stap's closing words on its transport, with the numbers.
void RecordOutput::summarize(std::ostream &err) const {
  if (corruption()) {
    // The counters live in the rings and messages a traced process wrote over.
    err << "sonde: " << (relay_ ? "relay" : "netlink") << " transport (" << modeName(options_.mode)
        << " mode): counts not shown (a traced process wrote over them)\n";
    return;
  }
  TransportTotals t = drain_->totals();
  uint64_t notWritten = chunks_->recordsNotWritten();
  double seconds = static_cast<double>(transport::monotonicNs() - startNs_) / 1e9;
  char line[512];
  std::snprintf(line, sizeof line,
                "sonde: %s transport (%s mode): %llu records, %llu bytes, %.1f MB/s, %llu lost",
                relay_ ? "relay" : "netlink", modeName(options_.mode),
                static_cast<unsigned long long>(t.records),
                static_cast<unsigned long long>(t.bytes),
                seconds > 0 ? static_cast<double>(t.bytes) / 1e6 / seconds : 0.0,
                static_cast<unsigned long long>(t.lost + notWritten));
  err << line;
  if (notWritten > 0)
    err << " (" << notWritten << " not written: write error)";
  if (options_.mode == transport::RelayMode::Overwrite)
    err << ", " << t.overwritten << " overwritten (flight recorder keeps the newest)";
  if (streams_ && streams_->malformed() > 0)
    err << ", " << streams_->malformed() << " chunks undecodable";
  if (t.malformedMessages > 0)
    err << ", " << t.malformedMessages << " messages malformed or missing";
  err << "\n";
  if (options_.verbose && relay_)
    for (uint32_t r = 0; r < relay_->ringCount(); ++r) {
      transport::RelayCounters c = relay_->ringCounters(r);
      if (c.recordsWritten + c.recordsLost > 0)
        err << "sonde:   ring " << r << ": " << c.recordsWritten << " records, " << c.bytesWritten
            << " bytes, " << c.recordsLost << " lost\n";
    }
  if (options_.traceDirectory)
    err << "sonde: binary trace in " << *options_.traceDirectory << " (print it with `sonde report "
        << *options_.traceDirectory << "`)\n";
  if (t.lost > 0 && options_.mode == transport::RelayMode::Block)
    err << "WARNING: There were " << t.lost
        << " transport failures (records lost in block mode: the consumer stalled for "
           "over a second or a thread found no free ring; try a larger -s)\n";
}

} // namespace sonde::session
