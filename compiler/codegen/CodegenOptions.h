// What passes 3-4 need from the command line, validated once into data: the
// optimisation level, the build directory and the -D limits baked into the
// module. (-G values are applied by the session when it creates the segment.)
#pragma once

#include "runtime/values/ValueAbi.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sonde::codegen {

struct CodegenOptions {
  unsigned optLevel = 2;             // -O0 .. -O3
  std::string buildDir;              // where module.o / module.so go (a BuildDirectory)
  sonde_limits limits{};             // -D MAXSTRINGLEN=... etc.; defaults from defaultLimits()
  std::optional<int64_t> maxNesting; // -D MAXNESTING; else computed from the call graph
  bool displayGlobals = true;        // --no-global-var-display clears it
  // -t: each handler adds its run time (ns) to a hidden stats global of its
  // own, which the session prints at exit; without -t nothing is emitted.
  bool probeTiming = false;
  // Interval of timer.jiffies(1): 1e9 / CONFIG_HZ of the running kernel.
  int64_t jiffyNs = 4000000;
  // CONFIG_HZ of the running kernel, for HZ() in kernel probes; 0 when unknown.
  int64_t kernelHz = 0;
  // Stock 1-byte sys/sdt.h sites take the jump path where StockSiteAnalysis
  // allows it; --stock-sites=trap clears it (every such site traps).
  bool stockJumpPath = true;

  CodegenOptions();
};

// The -D names codegen understands (language.md §7). Names it does not use but
// stap accepts (MINSTACKSPACE, ...) are validated as numbers and otherwise ignored.
bool isKnownLimitName(const std::string &name);

// Applies -D NAME=VALUE overrides to `opts`. Returns an error message (one line,
// naming the option) for a bad value, or nullopt.
std::optional<std::string>
applyLimitDefines(const std::vector<std::pair<std::string, std::string>> &defines,
                  CodegenOptions &opts);

} // namespace sonde::codegen
