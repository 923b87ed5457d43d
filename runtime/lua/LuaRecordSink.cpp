#include "runtime/lua/LuaRecordSink.h"

#include "runtime/session/TraceSchema.h"

#include <lua.hpp>

namespace sonde::lua {

namespace {

// Lua's print(), writing into sonde's output (upvalue 1: the FILE) instead of
// C's stdout, so the script's lines keep their place among sonde's.
int print(lua_State *L) {
  FILE *out = static_cast<FILE *>(lua_touserdata(L, lua_upvalueindex(1)));
  int n = lua_gettop(L);
  for (int i = 1; i <= n; ++i) {
    size_t length = 0;
    const char *text = luaL_tolstring(L, i, &length);
    if (i > 1)
      std::fputc('\t', out);
    std::fwrite(text, 1, length, out);
    lua_pop(L, 1);
  }
  std::fputc('\n', out);
  return 0;
}

// io.stdout:close() must leave sonde's output open (as Lua does for stdout).
int keepOpen(lua_State *L) {
  auto *stream = static_cast<luaL_Stream *>(luaL_checkudata(L, 1, LUA_FILEHANDLE));
  stream->closef = &keepOpen;
  luaL_pushfail(L);
  lua_pushliteral(L, "cannot close standard file");
  return 2;
}

// The standard libraries, with print, io.write and io.stdout on the FILE
// given as argument 1. Run protected: any of it may raise out of memory.
int setUp(lua_State *L) {
  FILE *out = static_cast<FILE *>(lua_touserdata(L, 1));
  luaL_openlibs(L);
  auto *stream = static_cast<luaL_Stream *>(lua_newuserdatauv(L, sizeof(luaL_Stream), 0));
  stream->closef = nullptr; // "closed" until complete, as liolib does
  luaL_setmetatable(L, LUA_FILEHANDLE);
  stream->f = out;
  stream->closef = &keepOpen;
  lua_getglobal(L, "io");
  lua_pushvalue(L, -2);
  lua_setfield(L, -2, "stdout");
  lua_getfield(L, -1, "output"); // io.output(stream): the default of io.write
  lua_pushvalue(L, -3);
  lua_call(L, 1, 0);
  lua_pushlightuserdata(L, out);
  lua_pushcclosure(L, print, 1);
  lua_setglobal(L, "print");
  return 0;
}

// The error value on top of the stack as text (error() may raise any value).
std::string errorMessage(lua_State *L) {
  if (const char *message = lua_tostring(L, -1))
    return message;
  return std::string("(error object is a ") + luaL_typename(L, -1) + " value)";
}

// The record an error happened on, for its message.
std::string describe(const session::TraceEvent &e) {
  std::string origin =
      " (pid " + std::to_string(e.origin.pid) + ", tid " + std::to_string(e.origin.tid) + ")";
  if (e.id == session::TraceSchema::kTextId)
    return "a text record" + origin;
  return "a record of " + (e.type->source.empty() ? std::string("sprintf") : e.type->source) +
         origin;
}

} // namespace

LuaRecordSink::LuaRecordSink(const sonde_trace_clock &clock, Write output,
                             std::unique_ptr<session::RecordSink> fallback, std::ostream &err)
    : clock_(clock), output_(std::move(output)), fallback_(std::move(fallback)), err_(err) {}

std::unique_ptr<LuaRecordSink> LuaRecordSink::open(const std::string &path,
                                                   const sonde_trace_clock &clock, Write output,
                                                   std::unique_ptr<session::RecordSink> fallback,
                                                   std::ostream &err, std::string *error) {
  std::unique_ptr<LuaRecordSink> sink(
      new LuaRecordSink(clock, std::move(output), std::move(fallback), err));
  static const cookie_io_functions_t kOutput{nullptr, &LuaRecordSink::writeOutput, nullptr,
                                             nullptr};
  sink->out_ = fopencookie(sink.get(), "w", kOutput);
  sink->L_ = luaL_newstate();
  if (!sink->out_ || !sink->L_) {
    *error = path + ": cannot start Lua: out of memory";
    return nullptr;
  }
  // Written out once per drain round (flush()), like the text output.
  std::setvbuf(sink->out_, nullptr, _IOFBF, 64 * 1024);
  lua_State *L = sink->L_;
  lua_pushcfunction(L, setUp);
  lua_pushlightuserdata(L, sink->out_);
  if (lua_pcall(L, 1, 0, 0) != LUA_OK) {
    *error = path + ": cannot start Lua: " + errorMessage(L);
    return nullptr;
  }
  lua_newtable(L);
  sink->types_ = luaL_ref(L, LUA_REGISTRYINDEX);
  // Lua says "FILE:LINE: message" itself, and "cannot open FILE: reason".
  if (luaL_loadfile(L, path.c_str()) != LUA_OK || lua_pcall(L, 0, 0, 0) != LUA_OK) {
    *error = errorMessage(L);
    return nullptr;
  }
  std::string message;
  if (!sink->call("begin", 0, &message)) {
    *error = "Lua error in begin(): " + message;
    return nullptr;
  }
  std::fflush(sink->out_); // begin()'s output before anything the target prints
  return sink;
}

LuaRecordSink::~LuaRecordSink() {
  if (L_)
    lua_close(L_);
  if (out_)
    std::fclose(out_);
}

ssize_t LuaRecordSink::writeOutput(void *self, const char *data, size_t size) {
  static_cast<LuaRecordSink *>(self)->output_(data, size);
  return static_cast<ssize_t>(size);
}

bool LuaRecordSink::call(const char *name, int args, std::string *message) {
  if (lua_getglobal(L_, name) != LUA_TFUNCTION) {
    lua_pop(L_, 1 + args);
    return true;
  }
  lua_insert(L_, -1 - args);
  if (lua_pcall(L_, args, 0, 0) == LUA_OK)
    return true;
  *message = errorMessage(L_);
  lua_pop(L_, 1);
  return false;
}

void LuaRecordSink::failed(const std::string &what, const std::string &message) {
  std::fflush(out_); // what the script printed so far goes before the records as text
  err_ << "sonde: Lua error in " << what << ": " << message << "\n"
       << "sonde: the Lua script gets no more records: they are printed as text\n";
  stopped_ = true;
}

void LuaRecordSink::pushTypeEntry(const session::TraceEvent &e) {
  lua_rawgeti(L_, LUA_REGISTRYINDEX, types_);
  if (lua_rawgeti(L_, -1, e.id) == LUA_TNIL) {
    lua_pop(L_, 1);
    const session::TraceEventType &type = *e.type;
    lua_createtable(L_, 0, 3);
    lua_pushlstring(L_, type.source.data(), type.source.size());
    lua_setfield(L_, -2, "probe");
    lua_pushlstring(L_, type.format.data(), type.format.size());
    lua_setfield(L_, -2, "format");
    lua_createtable(L_, static_cast<int>(type.fields.size()), 0);
    for (size_t i = 0; i < type.fields.size(); ++i) {
      lua_pushlstring(L_, type.fields[i].data(), type.fields[i].size());
      lua_rawseti(L_, -2, static_cast<lua_Integer>(i + 1));
    }
    lua_setfield(L_, -2, "names");
    lua_pushvalue(L_, -1);
    lua_rawseti(L_, -3, e.id);
  }
  lua_remove(L_, -2);
}

// The record as the table event(ev) receives (docs/lua.md). No `cpu`: records
// carry their process and thread, not the CPU they were written on.
void LuaRecordSink::pushEvent(const session::TraceEvent &e) {
  lua_createtable(L_, 0, 9);
  lua_pushinteger(L_,
                  static_cast<lua_Integer>(sonde_trace_clock_to_realtime_ns(&clock_, e.reading)));
  lua_setfield(L_, -2, "time_ns");
  lua_pushinteger(L_, e.origin.pid);
  lua_setfield(L_, -2, "pid");
  lua_pushinteger(L_, e.origin.tid);
  lua_setfield(L_, -2, "tid");
  if (e.id == session::TraceSchema::kTextId) {
    lua_pushstring(L_, e.args[0].s ? e.args[0].s : "");
    lua_setfield(L_, -2, "text");
    return;
  }
  pushTypeEntry(e);
  for (const char *key : {"probe", "format", "names"}) {
    lua_getfield(L_, -1, key);
    lua_setfield(L_, -3, key);
  }
  lua_pop(L_, 1);
  const session::TraceEventType &type = *e.type;
  int count = static_cast<int>(type.kinds.size());
  lua_createtable(L_, 0, count); // fields
  lua_createtable(L_, count, 0); // args
  for (int i = 0; i < count; ++i) {
    if (type.kinds[i] == SONDE_RECORD_ARG_STRING)
      lua_pushstring(L_, e.args[i].s ? e.args[i].s : "");
    else // longs, and record times (decoded as realtime ns)
      lua_pushinteger(L_, e.args[i].i);
    lua_pushvalue(L_, -1);
    lua_rawseti(L_, -3, i + 1);
    lua_setfield(L_, -3, type.fields[i].c_str());
  }
  lua_setfield(L_, -3, "args");
  lua_setfield(L_, -2, "fields");
}

void LuaRecordSink::event(const session::TraceEvent &e) {
  if (!stopped_) {
    pushEvent(e);
    std::string message;
    if (call("event", 1, &message))
      return;
    failed("event() for " + describe(e), message);
  }
  ++asText_;
  fallback_->event(e);
}

void LuaRecordSink::lost(const session::RecordOrigin &origin, uint64_t count) {
  if (stopped_) {
    fallback_->lost(origin, count);
    return;
  }
  lua_pushinteger(L_, static_cast<lua_Integer>(count));
  lua_pushinteger(L_, origin.tid);
  std::string message;
  if (!call("lost", 2, &message))
    failed("lost()", message);
}

void LuaRecordSink::flush() {
  std::fflush(out_);
  fallback_->flush();
}

bool LuaRecordSink::close(std::string *error) {
  // The records printed as text come before what finish() prints.
  flush();
  std::string message;
  bool finished = call("finish", 0, &message);
  if (!finished)
    err_ << "sonde: Lua error in finish(): " << message << "\n";
  std::fflush(out_);
  if (!fallback_->close(error))
    return false;
  if (stopped_) {
    *error = "the Lua script failed; " + std::to_string(asText_) + " record" +
             (asText_ == 1 ? " was" : "s were") + " printed as text instead";
    return false;
  }
  if (!finished) {
    *error = "the Lua script failed in finish()";
    return false;
  }
  return true;
}

} // namespace sonde::lua
