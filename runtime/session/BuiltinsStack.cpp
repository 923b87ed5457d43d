// Built-ins about where a marker probe fired (BuiltinAbi.h): its address, the
// user call stack (unwound from the registers saved at the marker) and the
// names of user addresses, in stap's text forms. Probes with no user context
// (begin, end, timers, process lifecycle) have no address and no stack.
#include "runtime/session/BuiltinAbi.h"
#include "runtime/session/MarkerAbi.h"
#include "runtime/session/RecordWriter.h"
#include "runtime/session/Runtime.h"
#include "runtime/session/TraceSchema.h"
#include "runtime/symbols/LoadedObjects.h"
#include "runtime/symbols/ProcessSymbols.h"
#include "runtime/symbols/SourceLines.h"
#include "runtime/symbols/StackUnwinder.h"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <unistd.h>
#include <vector>

using namespace sonde::session;
using sonde::symbols::SymbolStyle;

namespace {

const sonde_marker_site *markerSite(sonde_context *ctx) {
  return runtimeOf(ctx).module->markerSite(ctx->probe_index);
}

// The marker's runtime address, 0 outside a marker probe.
uint64_t markerAddress(sonde_context *ctx) {
  const sonde_marker_site *site = markerSite(ctx);
  return site && ctx->probe_data ? site->pc + site->load_bias : 0;
}

struct UserStack {
  std::vector<uint64_t> pcs; // room for MAXBACKTRACE frames
  size_t depth = 0;
  bool present = false; // a user context exists
};

// Raises a runtime error (as stap does for an unwinder failure) if libunwind
// is unusable.
UserStack unwind(sonde_context *ctx, uint32_t loc) {
  UserStack s;
  uint64_t pc = markerAddress(ctx);
  if (!pc)
    return s;
  // sonde gives full frames to every site of a module that unwinds
  // (SONDE_FRAME_UNWINDING_BUILTINS); a lean one here is a built-in missing there.
  if (markerSite(ctx)->lean_frame) {
    sonde_raise_message(ctx, "internal error: a lean marker frame cannot be unwound from", loc);
    return s;
  }
  s.present = true;
  s.pcs.resize(runtimeOf(ctx).module->layout().limits().max_backtrace);
  std::string error;
  s.depth =
      sonde::symbols::unwindFromMarker(*static_cast<const sonde_marker_frame *>(ctx->probe_data),
                                       pc, s.pcs.data(), s.pcs.size(), &error);
  if (!error.empty())
    sonde_raise_message(ctx, error.c_str(), loc);
  return s;
}

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
  return buf;
}

std::string symbolText(uint64_t address, SymbolStyle style) {
  return formatSymbol(sonde::symbols::resolveInThisProcess(address), style);
}

void copyOut(sonde_context *ctx, char *out, const std::string &text) {
  size_t n = std::min<size_t>(text.size(), runtimeOf(ctx).maxStringLen() - 1);
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
}

void emit(sonde_context *ctx, const std::string &text) {
  threadOf(ctx).output->append(text.data(), text.size(), *runtimeOf(ctx).output);
}

std::string hexStack(const UserStack &s) {
  std::string text;
  for (size_t i = 0; i < s.depth; ++i)
    text += hex(s.pcs[i]) + " ";
  return text;
}

std::string symbolizeHere(std::string_view addresses, SymbolStyle style, size_t limit) {
  return sonde::symbols::formatStack(addresses, style, limit, sonde::symbols::resolveInThisProcess);
}

// With a record transport the consumer symbolizes: the record carries the
// addresses, preceded (once per thread and object list) by the objects this
// process has mapped. False with the text transport.
bool sendStack(sonde_context *ctx, SymbolStyle style, const std::string &addresses) {
  ThreadState &ts = threadOf(ctx);
  if (!ts.records)
    return false;
  const TraceSchema &schema = *runtimeOf(ctx).records->schema;
  ts.output->flushRecords(); // earlier text first
  // Trivially destructible: exit-time probes run after TLS destructors.
  thread_local struct {
    pid_t pid;
    uint64_t generation;
    const RecordWriter *writer;
  } sent{};
  uint64_t generation = sonde::symbols::loadedObjectsGeneration();
  pid_t pid = getpid();
  if (sent.pid != pid || sent.generation != generation || sent.writer != ts.records.get()) {
    std::string objects =
        sonde::symbols::serializeObjects(sonde::symbols::loadedObjectsOfThisProcess());
    SondeFormatArg arg{};
    arg.s = objects.c_str();
    ts.records->write(TraceSchema::kObjectsId, schema.table()[TraceSchema::kObjectsId], &arg);
    sent = {pid, generation, ts.records.get()};
  }
  SondeFormatArg args[2] = {};
  args[0].i = static_cast<int64_t>(style);
  args[1].s = addresses.c_str();
  ts.records->write(TraceSchema::kUserStackId, schema.table()[TraceSchema::kUserStackId], args);
  return true;
}

// print_ubacktrace and its brief form: the stack symbolized by the consumer on
// a record transport, here on the text one.
void printStack(sonde_context *ctx, SymbolStyle style, uint32_t loc) {
  UserStack s = unwind(ctx, loc);
  if (!s.present) {
    emit(ctx, std::string("<no user backtrace at ") +
                  runtimeOf(ctx).module->probe(ctx->probe_index).pp + ">\n");
    return;
  }
  std::string addresses = hexStack(s);
  if (!sendStack(ctx, style, addresses))
    emit(ctx, symbolizeHere(addresses, style, 0));
}

// usymfile/usymline/usymfileline: what is known of the source position, else
// the address in hex (stap's _STP_SYM_FILENAME / _LINENUMBER forms).
std::string sourceText(sonde_context *ctx, uint64_t address, bool withFile, bool withLine,
                       uint32_t loc) {
  std::string error;
  sonde::symbols::SourceLine s = sonde::symbols::sourceLineInThisProcess(address, &error);
  if (!error.empty())
    sonde_raise_message(ctx, error.c_str(), loc);
  std::string line = s.line > 0 ? std::to_string(s.line) : std::string();
  if (withFile && withLine) {
    if (!s.file.empty())
      return line.empty() ? s.file : s.file + ":" + line;
    if (!line.empty())
      return "??:" + line;
  } else if (withFile && !s.file.empty()) {
    return s.file;
  } else if (withLine && !line.empty()) {
    return line;
  }
  return hex(address);
}

void raiseUnwindEnd(sonde_context *ctx, int64_t level, uint32_t loc) {
  std::string message = "reached end of stack before unwinding to level " + std::to_string(level);
  sonde_raise_message(ctx, message.c_str(), loc);
}

} // namespace

extern "C" {

int64_t sonde_fn_uaddr_0(sonde_context *ctx, uint32_t) {
  return static_cast<int64_t>(markerAddress(ctx));
}

void sonde_fn_probefunc_0(sonde_context *ctx, char *out, uint32_t) {
  uint64_t pc = markerAddress(ctx);
  copyOut(ctx, out, pc ? symbolText(pc, SymbolStyle::Name) : std::string());
}

// The function named in pp(): function("NAME@file") or statement("NAME@...").
void sonde_fn_ppfunc_0(sonde_context *ctx, char *out, uint32_t) {
  const char *pp = runtimeOf(ctx).module->probe(ctx->probe_index).pp;
  std::string name;
  const char *start = pp ? std::strstr(pp, "function(\"") : nullptr;
  if (start)
    start += std::strlen("function(\"");
  else if (pp && (start = std::strstr(pp, "statement(\"")))
    start += std::strlen("statement(\"");
  if (start)
    name.assign(start, std::strcspn(start, "@\""));
  copyOut(ctx, out, name);
}

void sonde_fn_usymname_1(sonde_context *ctx, char *out, int64_t addr, uint32_t) {
  copyOut(ctx, out, symbolText(static_cast<uint64_t>(addr), SymbolStyle::Name));
}

void sonde_fn_usymdata_1(sonde_context *ctx, char *out, int64_t addr, uint32_t) {
  copyOut(ctx, out, symbolText(static_cast<uint64_t>(addr), SymbolStyle::Data));
}

void sonde_fn_umodname_1(sonde_context *ctx, char *out, int64_t addr, uint32_t loc) {
  std::string module = sonde::symbols::resolveInThisProcess(static_cast<uint64_t>(addr)).module;
  if (module.empty()) {
    copyOut(ctx, out, "<unknown>");
    sonde_raise_message(ctx, "module cannot be found", loc);
    return;
  }
  copyOut(ctx, out, module);
}

void sonde_fn_usymfile_1(sonde_context *ctx, char *out, int64_t addr, uint32_t loc) {
  copyOut(ctx, out, sourceText(ctx, static_cast<uint64_t>(addr), true, false, loc));
}

void sonde_fn_usymline_1(sonde_context *ctx, char *out, int64_t addr, uint32_t loc) {
  copyOut(ctx, out, sourceText(ctx, static_cast<uint64_t>(addr), false, true, loc));
}

void sonde_fn_usymfileline_1(sonde_context *ctx, char *out, int64_t addr, uint32_t loc) {
  copyOut(ctx, out, sourceText(ctx, static_cast<uint64_t>(addr), true, true, loc));
}

// "0xADDR " per frame, as stap's ubacktrace() (the last one too).
void sonde_fn_ubacktrace_0(sonde_context *ctx, char *out, uint32_t loc) {
  copyOut(ctx, out, hexStack(unwind(ctx, loc)));
}

int64_t sonde_fn_ustack_1(sonde_context *ctx, int64_t n, uint32_t loc) {
  UserStack s = unwind(ctx, loc);
  if (ctx->error)
    return 0;
  // stap reads a negative level as the top one.
  size_t level = n < 0 ? 0 : static_cast<size_t>(n);
  if (level >= s.depth) {
    raiseUnwindEnd(ctx, n, loc);
    return 0;
  }
  return static_cast<int64_t>(s.pcs[level]);
}

// The first n + 1 frames ("0xA 0xB"), all of them for n == -1; whole
// addresses only.
void sonde_fn_ucallers_1(sonde_context *ctx, char *out, int64_t n, uint32_t loc) {
  UserStack s = unwind(ctx, loc);
  size_t limit = runtimeOf(ctx).maxStringLen() - 1;
  std::string text;
  for (int64_t i = 0; i <= n || n == -1; ++i) {
    if (static_cast<size_t>(i) >= s.depth) {
      if (n != -1)
        raiseUnwindEnd(ctx, n, loc);
      break;
    }
    std::string item = (i > 0 ? " " : "") + hex(s.pcs[i]);
    if (text.size() + item.size() > limit)
      break;
    text += item;
  }
  copyOut(ctx, out, text);
}

void sonde_fn_print_ubacktrace_0(sonde_context *ctx, uint32_t loc) {
  printStack(ctx, SymbolStyle::Full, loc);
}

void sonde_fn_print_ubacktrace_brief_0(sonde_context *ctx, uint32_t loc) {
  printStack(ctx, SymbolStyle::Brief, loc);
}

void sonde_fn_sprint_ubacktrace_0(sonde_context *ctx, char *out, uint32_t loc) {
  UserStack s = unwind(ctx, loc);
  size_t limit = runtimeOf(ctx).maxStringLen() - 1;
  copyOut(ctx, out,
          s.present ? symbolizeHere(hexStack(s), SymbolStyle::Simple, limit)
                    : std::string("<no user backtrace at ") +
                          runtimeOf(ctx).module->probe(ctx->probe_index).pp + ">\n");
}

// Addresses a handler saved belong to the process it runs in: the consumer
// can symbolize them only when that is a target (marker probes).
void sonde_fn_print_ustack_1(sonde_context *ctx, const char *stack, uint32_t) {
  if (!markerAddress(ctx) || !sendStack(ctx, SymbolStyle::Saved, stack))
    emit(ctx, symbolizeHere(stack, SymbolStyle::Saved, 0));
}

void sonde_fn_sprint_ustack_1(sonde_context *ctx, char *out, const char *stack, uint32_t) {
  copyOut(ctx, out, symbolizeHere(stack, SymbolStyle::Saved, runtimeOf(ctx).maxStringLen() - 1));
}

} // extern "C"
