// Pass 5 in the sonde process: load a compiled module, create the script state,
// run begin probes, timers until exit()/a signal/-T, then end (or error) probes,
// the end-of-run display, and stap's closing summary.
#pragma once

#include "runtime/session/RecordOutput.h"

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sonde::session {

class KernelProbes;

// Where the -c command's standard output goes. Auto: to sonde's standard error
// when sonde writes JSON records to the same standard output (which must stay
// parseable), else to sonde's standard output.
enum class TargetStdout { Auto, Stdout, Stderr };

struct SessionOptions {
  int64_t targetPid = 0;                 // target(); -x: the process the agent attaches to
  std::optional<double> timeoutSeconds;  // -T
  std::optional<std::string> outputFile; // -o
  bool displayGlobals = true;            // not --no-global-var-display
  std::vector<std::pair<std::string, std::string>> globals; // -G NAME=VALUE
  // -c CMD: run CMD with the agent preloaded; the session ends when it exits.
  std::optional<std::string> targetCommand;
  std::string agentPath;         // libsonde-agent.so, for -c and -x
  bool targetExitStatus = false; // --target-status: exit with the target's status
  TargetStdout targetStdout = TargetStdout::Auto; // --target-stdout
  bool verbose = false;          // -v: a closing line about the target
  // A record transport (--transport=relay, or implied by -b, -F, ...): every
  // handler's output travels as records that a sonde thread drains. Null: text.
  std::optional<RecordOptions> records;
  // -S SIZE,N: text output rotates over outputFile.0, .1, ... (N kept; 0 all).
  std::optional<std::pair<uint64_t, uint32_t>> rotation;
  bool flightRecorder = false; // -F: SIGUSR1 dumps the rings
  // The script's kernel probes (kernel.bpf.o beside the module), else null.
  KernelProbes *kernel = nullptr;
};

// Returns the process exit status: 0 when the run succeeded (an interrupt by
// SIGINT/SIGTERM counts as success), 1 after runtime errors or a failed start;
// with targetExitStatus, the -c target's exit status (128 + N after signal N).
int runSession(const std::string &modulePath, const SessionOptions &options, std::ostream &err);

} // namespace sonde::session
