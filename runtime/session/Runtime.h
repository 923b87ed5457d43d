// The state behind every sonde_context of one process: the loaded module, the
// mapped segment, the output, and per-thread scratch. Internal to runtime/session.
#pragma once

#include "runtime/session/LoadedModule.h"
#include "runtime/session/OutputSink.h"
#include "runtime/strings/StringAbi.h"
#include "runtime/transport/RecordCodec.h"
#include "runtime/values/Segment.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <regex.h>
#include <string>
#include <vector>

namespace sonde::session {

struct Runtime;
struct RecordTransport;
class KernelProbes;
class RecordWriter;
class SessionRequests;

// The captures of a thread's last `=~` (RegexMatch.cpp), for matched() and ngroups().
struct RegexCaptures {
  static constexpr size_t kMaxGroups = 16;
  bool valid = false; // the last =~ on this thread matched
  size_t groups = 0;  // capture groups of its pattern, the whole match included
  regmatch_t spans[kMaxGroups];
  std::string subject; // the string it matched (copied: the original may change)
};

// Scratch a handler thread keeps between invocations (never freed on the event path).
struct ThreadState {
  explicit ThreadState(uint32_t maxStringLen);
  std::vector<char> errorMessage;   // MAXSTRINGLEN: the propagating error's text
  std::vector<char> tokenizeBuffer; // MAXSTRINGLEN: tokenize()'s copy of its input
  SondeTokenizer tokenizer{};
  std::unique_ptr<OutputBuffer> output = std::make_unique<OutputBuffer>();
  uint64_t randomState;
  // Here rather than thread_local: exit-time probes run after TLS destructors.
  RegexCaptures regex;
  // A record transport: this thread's writer; null with the text transport.
  // Destroyed with the thread's state: its buffer is flushed and freed then.
  std::unique_ptr<RecordWriter> records;
  // Its cursor for inline printf records (sonde_context::record_cursor), or null.
  sonde_record_cursor *recordCursor = nullptr;

  ~ThreadState();
  // Starts writing this thread's output as records (relay, netlink).
  void useRecords(const RecordTransport &transport);
  // Flushes and closes the writer; later output would go to the text sink.
  void stopRecords();
  // Writes the buffered text to `sink` and sends a pending record batch.
  void flushOutput(OutputSink &sink);
};

struct Runtime {
  const LoadedModule *module = nullptr;
  values::Segment *segment = nullptr;
  OutputSink *output = nullptr;
  int errorFd = 2;         // warnings and runtime errors
  int64_t target = 0;      // target(): the -c/-x pid, else 0
  int64_t consumerPid = 0; // stp_pid(): the sonde process
  // Called when a handler asks the session to stop (exit(), too many errors).
  std::function<void()> wake;
  // Where thread() finds this thread's state when the host keeps its own registry
  // (the in-target agent, which must flush threads' output at exit); null: a
  // thread_local owned here.
  ThreadState &(*threadSource)(Runtime &rt) = nullptr;
  // A record transport, else null (text): printf as binary records, other
  // output as text records, through each thread's RecordWriter.
  const RecordTransport *records = nullptr;
  // Kernel probes of the script, if any (KernelProbes.h).
  KernelProbes *kernel = nullptr;
  // In sonde: where system() and switch_file() go (SessionRequests.h); null in
  // traced processes, which post them to the segment's mailbox.
  SessionRequests *requests = nullptr;

  uint32_t maxStringLen() const { return module->layout().limits().max_string_len; }
  // This thread's scratch for this runtime (created on first use).
  ThreadState &thread();
};

// The runtime and thread state behind a context.
inline Runtime &runtimeOf(sonde_context *ctx) { return *static_cast<Runtime *>(ctx->runtime); }
inline ThreadState &threadOf(sonde_context *ctx) {
  return *static_cast<ThreadState *>(ctx->thread);
}

// Writes text to the error stream at once, after this thread's pending output.
void writeError(Runtime &rt, const char *text, size_t size);

// This process's output losses (text write errors, netlink records dropped)
// are also counted in the script segment, where sonde reads those of every
// traced process when the run ends. Call once rt.output and rt.records are set.
void countOutputLossesInSegment(Runtime &rt);

} // namespace sonde::session
