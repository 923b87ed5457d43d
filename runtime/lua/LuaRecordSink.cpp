#include "runtime/lua/LuaRecordSink.h"

#include "runtime/session/TraceSchema.h"

#include <cstdio>
#include <lua.hpp>

namespace sonde::lua {

namespace {

// The record as the table event(ev) receives.
void pushEvent(lua_State *L, const session::TraceEvent &e, const sonde_trace_clock &clock) {
  lua_createtable(L, 0, 8);
  lua_pushinteger(L, sonde_trace_clock_to_realtime_ns(&clock, e.reading));
  lua_setfield(L, -2, "time_ns");
  lua_pushinteger(L, e.origin.pid);
  lua_setfield(L, -2, "pid");
  lua_pushinteger(L, e.origin.tid);
  lua_setfield(L, -2, "tid");
  if (e.id == session::TraceSchema::kTextId) {
    lua_pushstring(L, e.args[0].s ? e.args[0].s : "");
    lua_setfield(L, -2, "text");
    return;
  }
  const session::TraceEventType &type = *e.type;
  lua_pushlstring(L, type.source.data(), type.source.size());
  lua_setfield(L, -2, "probe");
  lua_pushlstring(L, type.format.data(), type.format.size());
  lua_setfield(L, -2, "format");
  lua_createtable(L, static_cast<int>(type.kinds.size()), 0); // names, in format order
  for (size_t i = 0; i < type.kinds.size(); ++i) {
    lua_pushstring(L, type.fields[i].c_str());
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  lua_setfield(L, -2, "names");
  lua_createtable(L, 0, static_cast<int>(type.kinds.size())); // fields
  lua_createtable(L, static_cast<int>(type.kinds.size()), 0); // args
  for (size_t i = 0; i < type.kinds.size(); ++i) {
    if (type.kinds[i] == SONDE_RECORD_ARG_STRING)
      lua_pushstring(L, e.args[i].s ? e.args[i].s : "");
    else // longs, and record times (decoded as realtime ns)
      lua_pushinteger(L, e.args[i].i);
    lua_pushvalue(L, -1);
    lua_rawseti(L, -3, static_cast<lua_Integer>(i + 1));
    lua_setfield(L, -3, type.fields[i].c_str());
  }
  lua_setfield(L, -3, "args");
  lua_setfield(L, -2, "fields");
}

// Where a record came from, for error messages.
std::string describe(const session::TraceEvent &e) {
  if (e.id == session::TraceSchema::kTextId || !e.type)
    return "a text record";
  return "a record of " + (e.type->source.empty() ? std::string("sprintf") : e.type->source);
}

} // namespace

std::unique_ptr<LuaRecordSink> LuaRecordSink::open(const std::string &path,
                                                   const sonde_trace_clock &clock,
                                                   std::unique_ptr<session::RecordSink> fallback,
                                                   std::ostream &err, std::string *error) {
  lua_State *L = luaL_newstate();
  if (!L) {
    *error = path + ": out of memory for Lua";
    return nullptr;
  }
  luaL_openlibs(L);
  // Loading reports "FILE:LINE: message" itself; a missing file says why.
  if (luaL_loadfile(L, path.c_str()) != LUA_OK || lua_pcall(L, 0, 0, 0) != LUA_OK) {
    *error = lua_tostring(L, -1) ? lua_tostring(L, -1) : path + ": cannot load";
    lua_close(L);
    return nullptr;
  }
  std::unique_ptr<LuaRecordSink> sink(new LuaRecordSink(L, clock, std::move(fallback), err));
  if (!sink->call("begin", 0, "begin()")) {
    *error = "the Lua script failed in begin()";
    return nullptr;
  }
  return sink;
}

LuaRecordSink::~LuaRecordSink() { lua_close(L_); }

bool LuaRecordSink::call(const char *name, int args, const std::string &where) {
  if (lua_getglobal(L_, name) != LUA_TFUNCTION) {
    lua_pop(L_, 1 + args);
    return true;
  }
  lua_insert(L_, -1 - args);
  bool ok = lua_pcall(L_, args, 0, 0) == LUA_OK;
  if (!ok) {
    const char *message = lua_tostring(L_, -1);
    err_ << "sonde: Lua error in " << where << ": " << (message ? message : "(no message)") << "\n";
    lua_pop(L_, 1);
    ++errors_;
  }
  // Lua's print() and io.write() use C stdio: out before sonde writes more.
  std::fflush(stdout);
  return ok;
}

void LuaRecordSink::event(const session::TraceEvent &e) {
  if (failed_) {
    fallback_->event(e);
    return;
  }
  pushEvent(L_, e, clock_);
  if (!call("event", 1, "event() for " + describe(e))) {
    failed_ = true;
    err_ << "sonde: the records from here on are printed as text\n";
    fallback_->event(e);
  }
}

void LuaRecordSink::lost(const session::RecordOrigin &origin, uint64_t count) {
  if (failed_) {
    fallback_->lost(origin, count);
    return;
  }
  lua_pushinteger(L_, static_cast<lua_Integer>(count));
  lua_pushinteger(L_, origin.tid);
  call("lost", 2, "lost()");
}

void LuaRecordSink::flush() { fallback_->flush(); }

bool LuaRecordSink::close(std::string *error) {
  call("finish", 0, "finish()");
  std::string fallbackError;
  bool ok = fallback_->close(&fallbackError);
  if (!ok) {
    *error = fallbackError;
    return false;
  }
  if (errors_ > 0) {
    *error =
        "the Lua script raised " + std::to_string(errors_) + " error" + (errors_ == 1 ? "" : "s");
    return false;
  }
  return true;
}

} // namespace sonde::lua
