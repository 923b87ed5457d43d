#include "driver/ReportCommand.h"

#include "runtime/lua/LuaRecordSink.h"
#include "runtime/session/CtfRecordSink.h"
#include "runtime/session/JsonRecordSink.h"
#include "runtime/session/StackRecordSink.h"
#include "runtime/session/TextRecordSink.h"
#include "runtime/session/TraceDirectory.h"
#include "runtime/transport/OutputPaths.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <ostream>
#include <string>
#include <unistd.h>

namespace sonde {

namespace {

constexpr const char *kUsage =
    "Usage: sonde report DIR [--format=text|json|ctf] [--lua FILE] [-o FILE|DIR] [-v]\n"
    "  Prints a binary trace recorded with `sonde -b -o DIR`: every thread's records\n"
    "  merged in time order, formatted as the script's printf would have printed them.\n"
    "  --format=json   one JSON object per record\n"
    "  --format=ctf    convert to a CTF trace in the -o directory (babeltrace2, Trace Compass)\n"
    "  --lua FILE      hand each record to the Lua script FILE (docs/lua.md)\n"
    "  -o FILE         write to FILE instead of standard output\n"
    "  -v              a closing line with the records read and lost\n";

struct ReportOptions {
  std::string dir;
  std::string format = "text";
  std::string output;
  std::string lua;
  bool verbose = false;
};

bool parseReportOptions(int argc, char **argv, ReportOptions &o, std::ostream &err) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      err << kUsage;
      return false;
    }
    if (a.rfind("--format=", 0) == 0) {
      o.format = a.substr(9);
      if (o.format != "text" && o.format != "json" && o.format != "ctf") {
        err << "sonde report: option --format: expected text, json or ctf, got '" << o.format
            << "'\n";
        return false;
      }
    } else if (a == "-o" && i + 1 < argc) {
      o.output = argv[++i];
    } else if ((a == "--lua" && i + 1 < argc) || a.rfind("--lua=", 0) == 0) {
      o.lua = a == "--lua" ? argv[++i] : a.substr(6);
    } else if (a == "-v") {
      o.verbose = true;
    } else if (!a.empty() && a[0] == '-') {
      err << "sonde report: unknown option '" << a << "'\n" << kUsage;
      return false;
    } else if (o.dir.empty()) {
      o.dir = a;
    } else {
      err << "sonde report: one trace directory only ('" << o.dir << "', then '" << a << "')\n";
      return false;
    }
  }
  if (o.dir.empty()) {
    err << "sonde report: no trace directory given\n" << kUsage;
    return false;
  }
  if (!o.lua.empty() && o.format != "text") {
    err << "sonde report: --lua hands the records to the script: it takes no --format\n";
    return false;
  }
  if (o.format == "ctf" && o.output.empty()) {
    err << "sonde report: --format=ctf needs -o DIR, the CTF trace directory to write\n";
    return false;
  }
  return true;
}

// Counts what the replay hands on, for -v.
class CountingSink final : public session::RecordSink {
public:
  explicit CountingSink(session::RecordSink &next) : next_(next) {}
  void event(const session::TraceEvent &e) override {
    ++events;
    next_.event(e);
  }
  void lost(const session::RecordOrigin &o, uint64_t n) override {
    lostRecords += n;
    next_.lost(o, n);
  }
  void flush() override { next_.flush(); }
  bool close(std::string *error) override { return next_.close(error); }
  uint64_t recordsNotWritten() const override { return next_.recordsNotWritten(); }
  uint64_t events = 0, lostRecords = 0;

private:
  session::RecordSink &next_;
};

} // namespace

int runReportCommand(int argc, char **argv, std::ostream &, std::ostream &err) {
  ReportOptions o;
  if (!parseReportOptions(argc, argv, o, err))
    return 1;
  std::string error;
  std::optional<session::TraceDirectory> trace = session::TraceDirectory::open(o.dir, &error);
  if (!trace) {
    err << "sonde report: " << error << "\n";
    return 1;
  }
  for (const std::string &warning : trace->warnings)
    err << "sonde report: WARNING: " << warning << "\n";
  int fd = STDOUT_FILENO;
  if (!o.output.empty() && o.format != "ctf") {
    fd = transport::openOutputFile(o.output, &error);
    if (fd < 0) {
      err << "sonde report: -o: " << error << "\n";
      return 1;
    }
  }
  session::OutputSink text(fd);
  if (fd != STDOUT_FILENO)
    text.adopt(o.output); // named in messages, closed by text.close()
  std::unique_ptr<session::RecordSink> sink;
  if (o.format == "ctf")
    sink = session::CtfRecordSink::open(o.output, *trace->schema, trace->clock, &error);
  else if (o.format == "json")
    sink = std::make_unique<session::JsonRecordSink>(
        trace->clock, [&text](const char *d, size_t n) { return text.write(d, n); });
  else
    sink = std::make_unique<session::TextRecordSink>(text);
  if (!sink) {
    err << "sonde report: " << error << "\n";
    return 1;
  }
  if (!o.lua.empty()) {
    sink = lua::LuaRecordSink::open(
        o.lua, trace->clock, [&text](const char *d, size_t n) { text.write(d, n); },
        std::move(sink), err, &error);
    if (!sink) {
      err << "sonde report: " << error << "\n";
      return 1;
    }
  }
  sink = std::make_unique<session::StackRecordSink>(*trace->schema, std::move(sink));
  CountingSink counted(*sink);
  // Records that do not decode were damaged after they were written: the
  // rest is printed, and the report fails.
  bool undecodable = false;
  bool replayed = session::replayTraceDirectory(
      *trace, counted,
      [&](const std::string &w) {
        err << "sonde report: ERROR: " << w << "\n";
        undecodable = true;
      },
      &error);
  if (!replayed)
    err << "sonde report: " << error << "\n";
  bool ok = replayed && !undecodable;
  std::string closeError;
  if (!counted.close(&closeError)) {
    err << "sonde report: ERROR: " << closeError << "\n";
    ok = false;
  }
  text.close();
  if (std::string failure = text.failure(); !failure.empty()) {
    err << "sonde report: ERROR: " << failure << "\n";
    ok = false;
  }
  if (uint64_t notWritten = counted.recordsNotWritten(); notWritten > 0)
    err << "sonde report: ERROR: " << notWritten << " of " << counted.events
        << " records were not written (write error)\n";
  // The trace's own account of what it lacks.
  for (const std::string &damage : trace->damage) {
    err << "sonde report: ERROR: " << damage << "\n";
    ok = false;
  }
  uint64_t lost = counted.lostRecords + trace->unattributedLost;
  if (lost > 0)
    err << "sonde report: WARNING: " << lost
        << " records were lost while recording (the transport's count)\n";
  if (trace->notWritten > 0)
    err << "sonde report: WARNING: " << trace->notWritten
        << " records were not written to the trace while recording (write error)\n";
  if (o.verbose)
    err << "sonde report: " << counted.events << " records from " << trace->streams.size()
        << " streams\n";
  return ok ? 0 : 1;
}

} // namespace sonde
