#include "driver/CommandLine.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>

namespace sonde {

const char *helpText() {
  return R"(Usage: sonde [OPTIONS] FILE [ARGS...]
       sonde [OPTIONS] - [ARGS...]          (script from standard input)
       sonde [OPTIONS] -e SCRIPT [ARGS...]
       sonde [OPTIONS] -l PROBEPOINT | -L PROBEPOINT
       sonde report DIR [--format=FORMAT] [--lua=FILE] [-o FILE] [-v]

Sonde compiles a SystemTap-style probe script and runs it against userspace
static markers and kernel tracepoints. ARGS are substituted for $1/@1 ...

Script and passes:
  -e SCRIPT          run the script given on the command line
  -E SCRIPT          add SCRIPT to the main script (repeatable)
  -p NUM             stop after pass NUM: 1 parse, 2 elaborate, 3 LLVM IR,
                     4 compile, 5 run (default 5)
  -I DIR             add a tapset (library) directory
  -d MODULE          accepted for stap scripts, not needed: symbol and unwind
                     data are read on demand (-v says so)
  --ldd              accepted as -d (the libraries' data), not needed
  --all-modules      accepted as -d (every module's data), not needed
  -D NAME=VALUE      override a runtime limit (MAXACTION, MAXSTRINGLEN, ...)
  -G NAME=VALUE      set a scalar global at start-up
  -u                 unoptimized: keep unused functions and variables
  -k                 keep the temporary build directory
  -t                 print each probe's hits and handler time (ns) at exit
  -O LEVEL           optimise compiled handlers at level 0-3 (default 2)
  -v                 more verbose (repeatable)
  -w                 suppress warnings
  -W                 treat warnings as errors
  --compatible=VER   language compatibility level (default 5.5)
  --skip-badvars     substitute 0 for unresolvable $variables
  --no-global-var-display
                     do not print write-only globals at exit
  --suppress-handler-errors
                     count handler errors instead of ending the session
  --suppress-time-limits
                     disable MAXACTION and overload limits
  --color[=WHEN]     colour diagnostics: always, never or auto (default auto)
  --stock-sites=PATH stock sys/sdt.h markers: jump (displaced instructions where
                     safe, else a trap; default) or trap (every hit a SIGTRAP)

Targets:
  -c CMD             start CMD with the probes attached; stop when it exits
  --target-status    exit with the -c command's exit status (128+N after signal N)
  --target-stdout=WHERE
                     the -c command's standard output: stdout or stderr (default
                     stderr when --format=json writes to standard output, so that
                     stays parseable; stdout otherwise)
  -x PID             attach to the running process PID (target() is PID);
                     detaching leaves it as it was
  -T SECS            exit after SECS seconds
  -l PROBEPOINT      list matching probe points
  -L PROBEPOINT      list matching probe points with their variables

Output and transport:
  -o FILE            write output to FILE (a directory with -b and --format=ctf)
  -S SIZE[,N]        switch output file every SIZE MB, keep at most N files
  -s NUM             transport buffer size in MB, 1-4095 (default: relay 64,
                     netlink and kernel probes 16)
  --subbuf-size=SIZE relay sub-buffer size (netlink: bytes per message), a power
                     of two from 4K to 64M (default: from -s)
  --num-subbuf=N     relay sub-buffers per thread ring, a power of two (default 4)
  -b                 bulk mode: record a binary trace, one file per thread, into the
                     -o directory; `sonde report DIR` prints it
  -F                 flight recorder: keep the newest records in memory, write
                     them out on exit and on SIGUSR1
  --transport=KIND   text, relay or netlink (default text; relay when -b, -F, -S,
                     --mode, --format or --lua ask for records)
  --mode=MODE        block, discard or overwrite (default block)
  --format=FORMAT    text, ctf or json (default text)
  --lua=FILE         hand each record to the Lua script FILE: its begin(),
                     event(ev) and finish() (docs/lua.md)

  -h, --help         show this help
  -V, --version      show the version
)";
}

void CommandLine::noteSymbolDataOption(const std::string &option) {
  if (std::find(symbolDataOptions.begin(), symbolDataOptions.end(), option) ==
      symbolDataOptions.end())
    symbolDataOptions.push_back(option);
}

namespace {

bool parseInt(const std::string &s, int64_t &out) {
  if (s.empty())
    return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

bool splitNameValue(const std::string &s, std::pair<std::string, std::string> &out) {
  auto eq = s.find('=');
  if (eq == 0 || eq == std::string::npos)
    return false;
  out = {s.substr(0, eq), s.substr(eq + 1)};
  return true;
}

bool oneOf(const std::string &v, std::initializer_list<const char *> allowed) {
  for (const char *a : allowed)
    if (v == a)
      return true;
  return false;
}

} // namespace

std::optional<CommandLine> parseCommandLine(int argc, char **argv, std::string &error) {
  CommandLine cl;
  std::vector<std::string> positional;
  bool optionsDone = false;

  // Options that take a value: short letter -> handler returning false on bad value.
  using Handler = std::function<bool(const std::string &)>;
  const std::map<std::string, Handler> withValue = {
      {"e",
       [&](const std::string &v) {
         if (cl.scriptText) {
           error = "Only one script can be given on the command line.";
           return false;
         }
         cl.scriptText = v;
         return true;
       }},
      {"E",
       [&](const std::string &v) {
         cl.extraScripts.push_back(v);
         return true;
       }},
      {"p",
       [&](const std::string &v) {
         int64_t n;
         if (!parseInt(v, n) || n < 1 || n > 5) {
           error = "Invalid pass number (should be 1-5).";
           return false;
         }
         cl.lastPass = static_cast<int>(n);
         return true;
       }},
      {"I",
       [&](const std::string &v) {
         cl.includeDirs.push_back(v);
         return true;
       }},
      {"d",
       [&](const std::string &) {
         cl.noteSymbolDataOption("-d");
         return true;
       }},
      {"O",
       [&](const std::string &v) {
         int64_t n;
         if (!parseInt(v, n) || n < 0 || n > 3) {
           error = "Invalid optimisation level (should be 0-3).";
           return false;
         }
         cl.optLevel = static_cast<unsigned>(n);
         return true;
       }},
      {"D",
       [&](const std::string &v) {
         std::pair<std::string, std::string> nv;
         if (!splitNameValue(v, nv)) {
           error = "option -D: expected NAME=VALUE, got '" + v + "'";
           return false;
         }
         cl.defines.push_back(nv);
         return true;
       }},
      {"G",
       [&](const std::string &v) {
         std::pair<std::string, std::string> nv;
         if (!splitNameValue(v, nv)) {
           error = "option -G: expected NAME=VALUE, got '" + v + "'";
           return false;
         }
         cl.globals.push_back(nv);
         return true;
       }},
      {"c",
       [&](const std::string &v) {
         cl.command = v;
         return true;
       }},
      {"x",
       [&](const std::string &v) {
         int64_t pid;
         if (!parseInt(v, pid) || pid <= 0) {
           error = "option -x: invalid process id '" + v + "'";
           return false;
         }
         cl.targetPid = pid;
         return true;
       }},
      {"T",
       [&](const std::string &v) {
         char *end = nullptr;
         double secs = std::strtod(v.c_str(), &end);
         if (v.empty() || *end != '\0' || !(secs > 0)) {
           error = "option -T: invalid number of seconds '" + v + "'";
           return false;
         }
         cl.timeoutSeconds = secs;
         return true;
       }},
      {"l",
       [&](const std::string &v) {
         cl.listPattern = v;
         return true;
       }},
      {"L",
       [&](const std::string &v) {
         cl.listPattern = v;
         cl.listVariables = true;
         return true;
       }},
      {"o",
       [&](const std::string &v) {
         cl.outputFile = v;
         return true;
       }},
      {"S",
       [&](const std::string &v) {
         int64_t size, count = 0;
         auto comma = v.find(',');
         bool ok = parseInt(v.substr(0, comma), size) && size > 0 && size <= 1 << 20;
         if (ok && comma != std::string::npos)
           ok = parseInt(v.substr(comma + 1), count) && count > 0 && count <= 1 << 20;
         if (!ok) {
           error = "option -S: expected SIZE[,N] with positive numbers, got '" + v + "'";
           return false;
         }
         cl.rotation = {static_cast<uint64_t>(size), static_cast<uint32_t>(count)};
         return true;
       }},
      {"s",
       [&](const std::string &v) {
         int64_t mb;
         if (!parseInt(v, mb) || mb < 1 || mb > 4095) {
           error = "Invalid buffer size (should be 1-4095).";
           return false;
         }
         cl.bufferMB = static_cast<unsigned>(mb);
         return true;
       }},
      {"subbuf-size",
       [&](const std::string &v) {
         // A power of two up to 64 MiB, with an optional k/K or m/M suffix (the
         // transport's own bounds are checked once the transport is known).
         int64_t n = 0;
         std::string digits = v;
         int64_t unit = 1;
         if (!digits.empty() && (digits.back() == 'k' || digits.back() == 'K'))
           unit = 1024, digits.pop_back();
         else if (!digits.empty() && (digits.back() == 'm' || digits.back() == 'M'))
           unit = 1024 * 1024, digits.pop_back();
         if (!parseInt(digits, n) || n < 1 || n > (int64_t{64} << 20) / unit ||
             (n * unit & (n * unit - 1)) != 0) {
           error = "option --subbuf-size: expected a power of two up to 64M, got '" + v + "'";
           return false;
         }
         cl.subbufSize = static_cast<uint32_t>(n * unit);
         return true;
       }},
      {"num-subbuf",
       [&](const std::string &v) {
         int64_t n = 0;
         if (!parseInt(v, n) || n < 2 || n > 1024 || (n & (n - 1)) != 0) {
           error = "option --num-subbuf: expected a power of two from 2 to 1024, got '" + v + "'";
           return false;
         }
         cl.subbufCount = static_cast<uint32_t>(n);
         return true;
       }},
      {"compatible",
       [&](const std::string &v) {
         cl.compatible = v;
         return true;
       }},
      {"transport",
       [&](const std::string &v) {
         if (!oneOf(v, {"text", "relay", "netlink"})) {
           error = "option --transport: expected text, relay or netlink, got '" + v + "'";
           return false;
         }
         cl.transport = v;
         return true;
       }},
      {"mode",
       [&](const std::string &v) {
         if (!oneOf(v, {"block", "discard", "overwrite"})) {
           error = "option --mode: expected block, discard or overwrite, got '" + v + "'";
           return false;
         }
         cl.mode = v;
         return true;
       }},
      {"lua",
       [&](const std::string &v) {
         if (v.empty()) {
           error = "option --lua: expected a Lua script file";
           return false;
         }
         cl.luaScript = v;
         return true;
       }},
      {"format",
       [&](const std::string &v) {
         if (!oneOf(v, {"text", "ctf", "json"})) {
           error = "option --format: expected text, ctf or json, got '" + v + "'";
           return false;
         }
         cl.format = v;
         return true;
       }},
      {"target-stdout",
       [&](const std::string &v) {
         if (!oneOf(v, {"stdout", "stderr"})) {
           error = "option --target-stdout: expected stdout or stderr, got '" + v + "'";
           return false;
         }
         cl.targetStdout = v;
         return true;
       }},
      {"stock-sites",
       [&](const std::string &v) {
         if (!oneOf(v, {"jump", "trap"})) {
           error = "option --stock-sites: expected jump or trap, got '" + v + "'";
           return false;
         }
         cl.stockSitesTrap = v == "trap";
         return true;
       }},
  };
  const std::map<std::string, std::function<void()>> flags = {
      {"v", [&] { ++cl.verbosity; }},
      {"w", [&] { cl.suppressWarnings = true; }},
      {"W", [&] { cl.warningsAreErrors = true; }},
      {"u", [&] { cl.unoptimized = true; }},
      {"k", [&] { cl.keepTemps = true; }},
      {"t", [&] { cl.probeTiming = true; }},
      {"b", [&] { cl.bulk = true; }},
      {"F", [&] { cl.flightRecorder = true; }},
      {"h", [&] { cl.showHelp = true; }},
      {"V", [&] { cl.showVersion = true; }},
      {"help", [&] { cl.showHelp = true; }},
      {"version", [&] { cl.showVersion = true; }},
      {"skip-badvars", [&] { cl.skipBadvars = true; }},
      {"no-global-var-display", [&] { cl.noGlobalVarDisplay = true; }},
      {"target-status", [&] { cl.targetStatus = true; }},
      {"suppress-handler-errors", [&] { cl.suppressHandlerErrors = true; }},
      {"suppress-time-limits", [&] { cl.suppressTimeLimits = true; }},
      {"ldd", [&] { cl.noteSymbolDataOption("--ldd"); }},
      {"all-modules", [&] { cl.noteSymbolDataOption("--all-modules"); }},
  };

  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    // Options may come anywhere (as with getopt); "--" makes the rest script
    // arguments even when they start with '-'.
    if (optionsDone || arg == "-" || arg.size() < 2 || arg[0] != '-') {
      positional.push_back(arg);
      continue;
    }
    if (arg == "--") {
      optionsDone = true;
      continue;
    }
    if (arg.rfind("--", 0) == 0) {
      std::string name = arg.substr(2), value;
      bool hasValue = false;
      if (auto eq = name.find('='); eq != std::string::npos) {
        value = name.substr(eq + 1);
        name = name.substr(0, eq);
        hasValue = true;
      }
      if (name == "color" || name == "colour") {
        if (!hasValue || value == "always")
          cl.color = CommandLine::Color::Always;
        else if (value == "never")
          cl.color = CommandLine::Color::Never;
        else if (value == "auto")
          cl.color = CommandLine::Color::Auto;
        else {
          error = "option --" + name + ": expected always, never or auto, got '" + value + "'";
          return std::nullopt;
        }
        continue;
      }
      if (auto f = flags.find(name); f != flags.end() && name.size() > 1) {
        if (hasValue) {
          error = "option --" + name + " takes no value";
          return std::nullopt;
        }
        f->second();
        continue;
      }
      if (auto h = withValue.find(name); h != withValue.end() && name.size() > 1) {
        if (!hasValue) {
          if (i + 1 >= argc) {
            error = "option --" + name + " requires a value";
            return std::nullopt;
          }
          value = argv[++i];
        }
        if (!h->second(value))
          return std::nullopt;
        continue;
      }
      error = "unknown option '" + arg + "' (see sonde --help)";
      return std::nullopt;
    }
    // A cluster of short options: -vvv, -p2, -p 2, -DNAME=VALUE.
    for (size_t j = 1; j < arg.size(); ++j) {
      std::string letter(1, arg[j]);
      if (auto f = flags.find(letter); f != flags.end()) {
        f->second();
        continue;
      }
      auto h = withValue.find(letter);
      if (h == withValue.end()) {
        error = "unknown option '-" + letter + "' (see sonde --help)";
        return std::nullopt;
      }
      std::string value;
      if (j + 1 < arg.size()) {
        value = arg.substr(j + 1);
      } else if (i + 1 < argc) {
        value = argv[++i];
      } else {
        error = "option -" + letter + " requires a value";
        return std::nullopt;
      }
      if (!h->second(value))
        return std::nullopt;
      break;
    }
  }

  if (cl.showHelp || cl.showVersion)
    return cl;
  if (cl.command && cl.targetPid) {
    error = "You can't specify -c and -x together.";
    return std::nullopt;
  }
  if (cl.listPattern) {
    if (cl.scriptText || !positional.empty()) {
      error = "options -l/-L take a probe point, not a script";
      return std::nullopt;
    }
    return cl;
  }
  if (!cl.scriptText) {
    if (positional.empty()) {
      error = "no script given: name a FILE, '-' for standard input, or use -e SCRIPT "
              "(see sonde --help)";
      return std::nullopt;
    }
    cl.scriptFile = positional.front();
    positional.erase(positional.begin());
  }
  cl.scriptArgs = std::move(positional);
  return cl;
}

} // namespace sonde
