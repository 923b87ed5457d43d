// The `sonde` command line (language.md §8): parsed and validated once, into data.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sonde {

struct CommandLine {
  // What to run.
  std::optional<std::string> scriptFile;  // FILE, or "-" for stdin
  std::optional<std::string> scriptText;  // -e SCRIPT
  std::vector<std::string> extraScripts;  // -E SCRIPT (repeatable)
  std::vector<std::string> scriptArgs;    // trailing ARGS: $1, @1, ...
  std::optional<std::string> listPattern; // -l PP / -L PP
  bool listVariables = false;             // -L

  int lastPass = 5; // -p NUM
  int verbosity = 0;
  bool suppressWarnings = false;  // -w
  bool warningsAreErrors = false; // -W
  bool unoptimized = false;       // -u
  bool keepTemps = false;         // -k
  bool probeTiming = false;       // -t: per-probe hits and handler time
  unsigned optLevel = 2;          // -O0 .. -O3: optimisation of compiled handlers
  // --color[=WHEN]: Auto (the default) colours a terminal, as stap does.
  enum class Color { Auto, Always, Never } color = Color::Auto;
  bool skipBadvars = false;
  bool suppressHandlerErrors = false;
  bool suppressTimeLimits = false;
  bool noGlobalVarDisplay = false;
  bool stockSitesTrap = false; // --stock-sites=trap
  bool targetStatus = false; // --target-status
  std::string targetStdout;  // --target-stdout: "stdout", "stderr"; "" when not given
  std::string compatible = "5.5";

  std::vector<std::pair<std::string, std::string>> defines; // -D NAME=VALUE
  std::vector<std::pair<std::string, std::string>> globals; // -G NAME=VALUE
  std::vector<std::string> includeDirs;                     // -I DIR
  // -d MODULE, --ldd, --all-modules as given, each once: stap's requests for
  // symbol and unwind data, which sonde reads on demand (-v says so).
  std::vector<std::string> symbolDataOptions;
  void noteSymbolDataOption(const std::string &option);

  // Target and run control.
  std::optional<std::string> command;   // -c CMD
  std::optional<int64_t> targetPid;     // -x PID
  std::optional<double> timeoutSeconds; // -T SECS

  // Output and transport.
  std::optional<std::string> outputFile;                 // -o FILE
  std::optional<std::pair<uint64_t, uint32_t>> rotation; // -S SIZE[,N]: MB, files kept (0 all)
  unsigned bufferMB = 0;                                 // -s NUM; 0: each transport's default
  uint32_t subbufSize = 0;              // --subbuf-size: bytes (netlink: per message); 0 = from -s
  uint32_t subbufCount = 0;             // --num-subbuf: per ring; 0 = 4
  bool bulk = false;                    // -b
  bool flightRecorder = false;          // -F
  std::string transport;                // --transport; "" when not given
  std::string mode;                     // --mode; "" when not given
  std::string format = "text";          // --format
  std::optional<std::string> luaScript; // --lua FILE

  bool showHelp = false, showVersion = false;
};

// Parses argv. On a bad option returns nullopt after writing one line naming it
// to `error`.
std::optional<CommandLine> parseCommandLine(int argc, char **argv, std::string &error);

// The --help text.
const char *helpText();

} // namespace sonde
