// libFuzzer entry for what sonde decodes from traced processes: the bytes of a
// relay sub-buffer or netlink batch (binary records), through the decoder, the
// stack sink (object lists, stack addresses) and the printf formatter, as the
// live consumer runs them. Beyond "no crash, no hang, no sanitizer report", it
// checks that decoding always moves forward within the chunk and hands every
// event exactly its format's arguments.
#include "runtime/session/RecordStreams.h"
#include "runtime/session/StackRecordSink.h"
#include "runtime/session/TraceSchema.h"

#include <cstdio>
#include <cstdlib>
#include <memory>

namespace {

using namespace sonde::session;

// Formats with every argument kind: long, string, record time (gettimeofday_ns).
const TraceSchema &schema() {
  static const TraceSchema s = [] {
    std::optional<TraceSchema> built = TraceSchema::build(
        {{"%d %s %x\n", "begin", 0}, {"%-10s|%5d|%c\n", "end", 0}, {"t=%d n=%d\n", "timer", 1}},
        nullptr);
    if (!built)
      std::abort();
    return std::move(*built);
  }();
  return s;
}

// Formats each event as the text sink would, checking it has its arguments.
class FormattingSink final : public RecordSink {
public:
  void event(const TraceEvent &e) override {
    if (!e.type || !e.args)
      std::abort();
    for (size_t i = 0; i < e.type->kinds.size(); ++i)
      if (e.type->kinds[i] == SONDE_RECORD_ARG_STRING && !e.args[i].s)
        std::abort();
    char out[4096];
    SondeFormatError error{};
    sonde_format_print(&e.type->spec, e.args, out, sizeof out, nullptr, &error);
  }
  bool close(std::string *) override { return true; }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const sonde_trace_clock clock{};
  StackRecordSink stacks(schema(), std::make_unique<FormattingSink>(), 64);
  RecordStreams streams(schema(), clock, stacks, [](const std::string &) {});
  // Two chunks of one stream: the decoder's time state carries across.
  size_t half = size / 2;
  streams.chunk(RecordOrigin{1, 1, 1}, reinterpret_cast<const char *>(data),
                static_cast<uint32_t>(half));
  streams.chunk(RecordOrigin{1, 1, 1}, reinterpret_cast<const char *>(data + half),
                static_cast<uint32_t>(size - half));
  if (streams.events() > size / SONDE_RECORD_HEADER_SIZE)
    std::abort(); // more events than headers fit: decoding went backwards
  return 0;
}
