// Lua consumer scripts (`--lua FILE`), like `perf script -s`: the script's
// global functions begin(), event(ev) and finish() see every decoded record,
// live or from a recorded trace. Lives in the `sonde` process only: the agent
// never links Lua.
#pragma once

#include "runtime/session/RecordSink.h"
#include "runtime/transport/TraceClock.h"

#include <memory>
#include <ostream>
#include <string>

struct lua_State;

namespace sonde::lua {

class LuaRecordSink final : public session::RecordSink {
public:
  // Loads `path` and runs its top level and begin(). Null with "FILE:LINE:
  // message" in *error if the script does not load or fails there. After the
  // first error in event(), records go to `fallback` (as text) so none is
  // lost; errors are reported on `err`. `clock` turns readings into ns.
  static std::unique_ptr<LuaRecordSink> open(const std::string &path,
                                             const sonde_trace_clock &clock,
                                             std::unique_ptr<session::RecordSink> fallback,
                                             std::ostream &err, std::string *error);
  ~LuaRecordSink() override;

  void event(const session::TraceEvent &e) override;
  // lost(count, tid) in the script, if it defines one.
  void lost(const session::RecordOrigin &origin, uint64_t count) override;
  void flush() override;
  // Runs finish(); false if the script failed anywhere.
  bool close(std::string *error) override;

private:
  LuaRecordSink(lua_State *L, const sonde_trace_clock &clock,
                std::unique_ptr<session::RecordSink> fallback, std::ostream &err)
      : L_(L), clock_(clock), fallback_(std::move(fallback)), err_(err) {}
  // Calls global `name` with `args` values on the stack (popped); false on error.
  bool call(const char *name, int args, const std::string &where);

  lua_State *L_;
  sonde_trace_clock clock_;
  std::unique_ptr<session::RecordSink> fallback_;
  std::ostream &err_;
  bool failed_ = false; // event() raised: later records go to the fallback
  int errors_ = 0;
};

} // namespace sonde::lua
