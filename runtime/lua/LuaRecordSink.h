// Lua consumer scripts (`--lua FILE`), like `perf script -s`: the script's
// global functions begin(), event(ev), lost(count, tid) and finish() see every
// decoded record, live or from a recorded trace. Lives in the `sonde` process
// only: the agent never links Lua. The script's API is in docs/lua.md.
#pragma once

#include "runtime/session/RecordSink.h"
#include "runtime/transport/TraceClock.h"

#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <sys/types.h>

struct lua_State;

namespace sonde::lua {

class LuaRecordSink final : public session::RecordSink {
public:
  // Where the script's print() and io.write() go: sonde's output (standard
  // output, -o FILE, -S files), the same place `fallback` writes.
  using Write = std::function<void(const char *, size_t)>;

  // Loads `path` and runs its top level and begin(). Null with "FILE:LINE:
  // message" in *error if the script does not load or fails there. After the
  // first error in event() or lost(), Lua is no longer called and records go
  // to `fallback` (the text output) so none is lost; errors are reported on
  // `err`. `clock` turns readings into ns.
  static std::unique_ptr<LuaRecordSink> open(const std::string &path,
                                             const sonde_trace_clock &clock, Write output,
                                             std::unique_ptr<session::RecordSink> fallback,
                                             std::ostream &err, std::string *error);
  ~LuaRecordSink() override;

  void event(const session::TraceEvent &e) override;
  void lost(const session::RecordOrigin &origin, uint64_t count) override;
  void flush() override;
  // The records the text fallback could not write (the script's own output
  // is counted in lines and bytes by sonde's output).
  uint64_t recordsNotWritten() const override { return fallback_->recordsNotWritten(); }
  // Runs finish(); false if the script failed anywhere.
  bool close(std::string *error) override;

private:
  LuaRecordSink(const sonde_trace_clock &clock, Write output,
                std::unique_ptr<session::RecordSink> fallback, std::ostream &err);
  // Calls global `name` (if the script defines it) with the `args` values on
  // top of the stack, which it pops. On error, the message (FILE:LINE: ...).
  bool call(const char *name, int args, std::string *message);
  // Reports a failed call made for `what`; later records go to the fallback.
  void failed(const std::string &what, const std::string &message);
  void pushEvent(const session::TraceEvent &e);
  // The per-format constants of ev (probe, format, names), made once.
  void pushTypeEntry(const session::TraceEvent &e);
  static ssize_t writeOutput(void *self, const char *data, size_t size);

  lua_State *L_ = nullptr;
  FILE *out_ = nullptr; // the script's standard output, buffered until flush()
  int types_ = 0;       // registry reference: format id -> its type entry
  sonde_trace_clock clock_;
  Write output_;
  std::unique_ptr<session::RecordSink> fallback_;
  std::ostream &err_;
  bool stopped_ = false; // the script failed: it sees no more records
  uint64_t asText_ = 0;  // records printed as text since
};

} // namespace sonde::lua
