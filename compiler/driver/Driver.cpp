#include "driver/Driver.h"

#include "codegen/Codegen.h"
#include "driver/CompilerStack.h"
#include "driver/Frontend.h"
#include "driver/HostInfo.h"
#include "driver/ProbeListing.h"
#include "print/ScriptPrinter.h"
#include "probes/marker/MarkerCatalog.h"
#include "probes/tracepoint/KernelProbeSet.h"
#include "runtime/lua/LuaRecordSink.h"
#include "runtime/session/Session.h"
#include "sema/BuiltinCalls.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <unistd.h>

namespace sonde {

namespace {

bool readScript(const std::string &path, std::string &text, std::ostream &err) {
  if (path == "-") {
    std::stringstream ss;
    ss << std::cin.rdbuf();
    text = ss.str();
    return true;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    err << "sonde: cannot open script file '" << path << "': " << std::strerror(errno) << "\n";
    return false;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  text = ss.str();
  return true;
}

// A word list of one word, for wordexp: `path` single-quoted.
std::string shellWord(const std::string &path) {
  std::string out = "'";
  for (char c : path)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// --color: auto colours only a terminal that can show it (not TERM=dumb), as stap.
bool colourDiagnostics(CommandLine::Color when) {
  if (when != CommandLine::Color::Auto)
    return when == CommandLine::Color::Always;
  const char *term = std::getenv("TERM");
  return isatty(STDERR_FILENO) && !(term && std::strcmp(term, "dumb") == 0);
}

// What a bare `process` probes: the -c command's program, or the executable of
// the -x process; nullopt after an error about -x.
std::optional<std::string> bareProcessCommand(const CommandLine &cl, std::ostream &err) {
  if (cl.command || !cl.targetPid)
    return cl.command.value_or("");
  std::string error;
  std::optional<std::string> exe =
      probes::marker::MarkerCatalog::executableOfProcess(*cl.targetPid, error);
  if (!exe) {
    err << "sonde: option -x: " << error << "\n";
    return std::nullopt;
  }
  return shellWord(*exe);
}

// The process the session attaches to: -x PID, or the PID of process(PID)
// probe points; nullopt after an error (two different processes).
std::optional<int64_t> attachedPid(const ast::Script &script, const CommandLine &cl,
                                   std::ostream &err) {
  std::optional<int64_t> pid = cl.targetPid;
  for (const auto &probe : script.derived)
    for (const auto &c : probe->originPoint->components) {
      auto *n = c.name == "process" ? dynamic_cast<const ast::NumberLit *>(c.arg.get()) : nullptr;
      if (!n || (pid && *pid == n->value))
        continue;
      if (cl.command) {
        err << "sonde: process(" << n->value << ") attaches to a running process; it cannot "
            << "go with -c\n";
        return std::nullopt;
      }
      if (pid) {
        err << "sonde: process(" << n->value << ") names another process than "
            << (cl.targetPid ? "-x " : "process(") << *pid << (cl.targetPid ? "" : ")")
            << ": a session attaches to one running process\n";
        return std::nullopt;
      }
      pid = n->value;
    }
  return pid.value_or(0);
}

FrontendOptions frontendOptions(const CommandLine &cl, const std::string &bareProcess) {
  FrontendOptions o;
  o.parse.scriptArgs = cl.scriptArgs;
  o.parse.kernelRelease = hostKernelRelease();
  o.parse.kernelVersion = hostKernelVersion();
  o.parse.compatible = cl.compatible;
  o.parse.kernelConfig = &hostKernelConfig;
  o.sema.unoptimized = cl.unoptimized;
  o.sema.skipBadvars = cl.skipBadvars;
  o.sema.targetCommand = bareProcess;
  o.includeDirs = cl.includeDirs;
  return o;
}

// What passes 3-4 take from the command line; an error names the bad option.
std::optional<std::string> codegenOptions(const CommandLine &cl, codegen::CodegenOptions &o) {
  o.optLevel = cl.optLevel;
  o.displayGlobals = !cl.noGlobalVarDisplay;
  o.probeTiming = cl.probeTiming;
  o.stockJumpPath = !cl.stockSitesTrap;
  o.limits.suppress_time_limits = cl.suppressTimeLimits ? 1 : 0;
  if (std::string hz = hostKernelConfig("CONFIG_HZ"); !hz.empty())
    if (long n = std::strtol(hz.c_str(), nullptr, 10); n > 0) {
      o.jiffyNs = 1000000000 / n;
      o.kernelHz = n;
    }
  return codegen::applyLimitDefines(cl.defines, o);
}

// Pass 3: -p3 prints the generated IR.
std::unique_ptr<codegen::GeneratedModule>
runPass3(Frontend &fe, const codegen::CodegenOptions &opts, std::ostream &err) {
  auto module = codegen::generateModule(fe.script(), opts, fe.diags());
  fe.diags().flush();
  if (!module)
    err << "Pass 3: translation failed.  [man error::pass3]\n";
  return module;
}

// Pass 4: the module goes into a temporary directory, kept with -k and when the
// run stops after pass 4 with a module (its path is the result).
std::optional<std::string> runPass4(Frontend &fe, codegen::GeneratedModule &module,
                                    codegen::CodegenOptions &opts,
                                    std::optional<codegen::BuildDirectory> &dir,
                                    const CommandLine &cl, std::ostream &err) {
  std::string error;
  dir = codegen::BuildDirectory::create(&error);
  if (!dir) {
    err << "sonde: " << error << "\n";
    err << "Pass 4: compilation failed.  [man error::pass4]\n";
    return std::nullopt;
  }
  opts.buildDir = dir->path();
  if (cl.keepTemps)
    dir->keep();
  std::optional<std::string> path = codegen::emitModule(module, opts, fe.diags());
  fe.diags().flush();
  if (!path)
    err << "Pass 4: compilation failed.  [man error::pass4]\n";
  else if (cl.lastPass == 4)
    dir->keep();
  if (cl.keepTemps)
    err << "Keeping temporary directory \"" << dir->path() << "\"\n";
  return path;
}

// The in-target agent: $SONDE_AGENT, else beside the sonde executable (build
// tree), else where `cmake --install` puts it.
std::optional<std::string> agentLibraryPath() {
  if (const char *env = std::getenv("SONDE_AGENT"); env && *env)
    return access(env, R_OK) == 0 ? std::optional<std::string>(env) : std::nullopt;
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0)
    return std::nullopt;
  std::string dir(self, static_cast<size_t>(n));
  dir.erase(dir.rfind('/'));
  for (const std::string &candidate :
       {dir + "/libsonde-agent.so", std::string(SONDE_AGENT_INSTALL_PATH)})
    if (access(candidate.c_str(), R_OK) == 0)
      return candidate;
  return std::nullopt;
}

// --lua: the script's sink in front of the text output, which its print()
// and io.write() share.
std::unique_ptr<session::RecordSink>
openLuaSink(const std::string &path, const sonde_trace_clock &clock, session::OutputSink &output,
            std::unique_ptr<session::RecordSink> text, std::string *error) {
  return lua::LuaRecordSink::open(
      path, clock, [&output](const char *data, size_t n) { output.write(data, n); },
      std::move(text), std::cerr, error);
}

// -b, -F, -S, --mode, --format, --lua and the sub-buffer geometry need every
// record to pass through sonde: they take a record transport (relay unless
// netlink is asked for). So does switch_file() with -o and -c (`switchesFiles`):
// with the text transport, traced processes would go on writing the first file.
// Returns the error text for options that do not go together, else fills `o`.
std::optional<std::string> recordOptions(const CommandLine &cl, bool switchesFiles,
                                         session::SessionOptions &o) {
  const char *wants = cl.bulk                                  ? "-b"
                      : cl.flightRecorder                      ? "-F"
                      : cl.rotation                            ? "-S"
                      : !cl.mode.empty() && cl.mode != "block" ? "--mode"
                      : cl.format != "text"                    ? "--format"
                      : cl.subbufSize                          ? "--subbuf-size"
                      : cl.subbufCount                         ? "--num-subbuf"
                      : cl.luaScript                           ? "--lua"
                      : switchesFiles                          ? "-o with switch_file() and -c"
                                                               : nullptr;
  std::string transport = cl.transport.empty() ? (wants ? "relay" : "text") : cl.transport;
  if (transport == "text") {
    if (wants)
      return std::string("option ") + wants +
             " needs a record transport (--transport=relay or netlink), not --transport=text";
    return std::nullopt;
  }
  if (transport == "netlink" && (cl.flightRecorder || cl.mode == "overwrite"))
    return std::string("the netlink transport queues messages in a socket, which cannot "
                       "overwrite old ones: -F and --mode=overwrite need --transport=relay");
  if (cl.flightRecorder && !cl.mode.empty() && cl.mode != "overwrite")
    return "option -F keeps the newest records (overwrite mode); it cannot take --mode=" + cl.mode;
  if (cl.bulk && cl.format != "text")
    return std::string("option -b records binary streams; give --format to `sonde report` instead");
  if (cl.rotation && (!cl.outputFile || cl.bulk || cl.format == "ctf"))
    return std::string("option -S rotates a text or JSON output file: it needs -o FILE, and "
                       "not -b or --format=ctf");
  if (cl.format == "ctf" && !cl.outputFile)
    return std::string("option --format=ctf needs -o DIR, the trace directory to write");
  if (cl.luaScript && (cl.bulk || cl.format != "text"))
    return std::string("option --lua takes the records as they come: record a trace with -b "
                       "and run the script over it with `sonde report DIR --lua FILE`, or drop "
                       "--format");

  session::RecordOptions r;
  r.netlink = transport == "netlink";
  r.bufferMb = cl.bufferMB;
  r.subbufSize = cl.subbufSize;
  r.subbufCount = cl.subbufCount;
  if (r.netlink && cl.subbufSize > (64u << 10))
    return std::string("option --subbuf-size: a netlink message carries at most 64K");
  if (!r.netlink && cl.subbufSize && cl.subbufSize < 4096)
    return std::string("option --subbuf-size: relay sub-buffers are 4K to 64M");
  if (r.netlink && cl.subbufCount)
    return std::string("option --num-subbuf is for the relay transport (netlink queues "
                       "messages in its socket: size it with -s)");
  r.verbose = cl.verbosity > 0;
  std::string mode = cl.flightRecorder ? "overwrite" : cl.mode;
  r.mode = mode == "discard"     ? transport::RelayMode::Discard
           : mode == "overwrite" ? transport::RelayMode::Overwrite
                                 : transport::RelayMode::Block;
  r.format = cl.format == "ctf"    ? session::OutputFormat::Ctf
             : cl.format == "json" ? session::OutputFormat::Json
                                   : session::OutputFormat::Text;
  if (cl.bulk && cl.outputFile) {
    r.traceDirectory = cl.outputFile;
  } else if (cl.bulk) {
    // A new directory of this name, or of this name and a random suffix when
    // it is taken (another run in the same second, or a name planted there).
    char name[64];
    time_t now = time(nullptr);
    tm local;
    strftime(name, sizeof name, "sonde-trace-%Y%m%d-%H%M%S", localtime_r(&now, &local));
    r.traceDirectory = name;
    r.newTraceDirectory = true;
  }
  if (cl.format == "ctf")
    r.ctfDirectory = cl.outputFile;
  if (cl.luaScript)
    r.consumer = std::bind_front(openLuaSink, *cl.luaScript);
  o.records = r;
  o.rotation = cl.rotation;
  o.flightRecorder = r.mode == transport::RelayMode::Overwrite;
  return std::nullopt;
}

// Pass 5: load the module and run the session (attached to process `pid`, or 0).
int runPass5(const std::string &modulePath, const CommandLine &cl, int64_t pid, bool switchesFiles,
             std::ostream &err) {
  if (cl.suppressHandlerErrors) {
    err << "sonde: option --suppress-handler-errors is not supported by this build yet\n";
    return 1;
  }
  session::SessionOptions o;
  if (std::optional<std::string> bad = recordOptions(cl, switchesFiles, o)) {
    err << "sonde: " << *bad << "\n";
    return 1;
  }
  o.targetPid = pid;
  o.timeoutSeconds = cl.timeoutSeconds;
  o.outputFile = cl.outputFile;
  o.displayGlobals = !cl.noGlobalVarDisplay;
  o.globals = cl.globals;
  o.verbose = cl.verbosity > 0;
  o.targetExitStatus = cl.targetStatus;
  o.targetStdout = cl.targetStdout == "stderr"   ? session::TargetStdout::Stderr
                   : cl.targetStdout == "stdout" ? session::TargetStdout::Stdout
                                                 : session::TargetStdout::Auto;
  if (cl.command || pid) {
    std::optional<std::string> agent = agentLibraryPath();
    if (!agent) {
      err << "sonde: " << (cl.command ? "-c" : "-x")
          << ": cannot find the agent library libsonde-agent.so next to sonde or in "
          << SONDE_AGENT_INSTALL_PATH << " (set SONDE_AGENT to its path)\n";
      return 1;
    }
    o.targetCommand = cl.command;
    o.agentPath = *agent;
  }
  // Kernel probes: their BPF object beside the module; -s MB sizes their ring.
  std::unique_ptr<probes::tracepoint::KernelProbeSet> kernel;
  std::string kernelObject =
      std::filesystem::path(modulePath).replace_filename("kernel.bpf.o").string();
  if (std::filesystem::exists(kernelObject)) {
    std::string error;
    uint64_t mb = cl.bufferMB ? cl.bufferMB : session::kDefaultBufferMb;
    uint64_t ring = std::bit_floor(std::max<uint64_t>(mb << 20, 1 << 16));
    kernel = probes::tracepoint::KernelProbeSet::open(kernelObject, ring, &error);
    if (!kernel) {
      err << "sonde: " << error << "\n";
      return 1;
    }
    o.kernel = kernel.get();
  }
  return session::runSession(modulePath, o, err);
}

// What passes 1-4 leave for pass 5.
struct CompiledScript {
  std::optional<int> status; // set when the run ends before pass 5, with this status
  std::string modulePath;
  std::optional<codegen::BuildDirectory> dir;
  int64_t pid = 0;
  bool switchesFiles = false;
};

// Passes 1-4 (or -l), on the compiler's stack: the script's AST is made and
// freed there.
void compileScript(const CommandLine &cl, std::ostream &out, std::ostream &err,
                   CompiledScript &result) {
  auto finish = [&](int status) { result.status = status; };
  if (cl.verbosity > 0)
    for (const std::string &option : cl.symbolDataOptions)
      err << "sonde: " << option << ": not needed, symbols are read on demand\n";
  std::optional<std::string> bareProcess = bareProcessCommand(cl, err);
  if (!bareProcess)
    return finish(1);
  if (cl.listPattern)
    return finish(
        listProbePoints({*cl.listPattern, cl.listVariables, *bareProcess, !cl.stockSitesTrap},
                        frontendOptions(cl, *bareProcess), out, err));

  Frontend fe(err, frontendOptions(cl, *bareProcess));
  fe.diags().setSuppressWarnings(cl.suppressWarnings);
  fe.diags().setWarningsAreErrors(cl.warningsAreErrors);
  fe.diags().setVerbose(cl.verbosity > 0);
  fe.diags().setColor(colourDiagnostics(cl.color));

  for (const auto &[name, value] : cl.defines)
    if (!codegen::isKnownLimitName(name))
      fe.diags().warning("unknown -D name '" + name + "' ignored");
  codegen::CodegenOptions copts;
  if (auto bad = codegenOptions(cl, copts)) {
    err << "sonde: " << *bad << "\n";
    return finish(1);
  }

  std::string text;
  std::string name = cl.scriptFile.value_or("<input>");
  if (cl.scriptText)
    text = *cl.scriptText;
  else if (!readScript(*cl.scriptFile, text, err))
    return finish(1);

  bool parsed = fe.parseUserScript(name, std::move(text));
  for (const auto &extra : cl.extraScripts)
    parsed &= fe.parseUserScript("<input>", extra);
  if (!parsed) {
    err << "Pass 1: parse failed.  [man error::pass1]\n";
    return finish(1);
  }
  if (cl.lastPass == 1) {
    printParsedScript(fe.script(), out);
    return finish(0);
  }

  if (!fe.parseLibraries()) {
    err << "Pass 1: parse failed.  [man error::pass1]\n";
    return finish(1);
  }
  if (!fe.elaborate()) {
    err << "Pass 2: analysis failed.  [man error::pass2]\n";
    return finish(1);
  }
  if (cl.lastPass == 2) {
    printElaboratedScript(fe.script(), out, cl.verbosity > 0);
    return finish(0);
  }
  std::optional<int64_t> pid = attachedPid(fe.script(), cl, err);
  if (!pid)
    return finish(1);

  std::unique_ptr<codegen::GeneratedModule> module = runPass3(fe, copts, err);
  if (!module)
    return finish(1);
  if (cl.lastPass == 3) {
    out << module->irText();
    return finish(0);
  }

  std::optional<std::string> modulePath = runPass4(fe, *module, copts, result.dir, cl, err);
  if (!modulePath)
    return finish(1);
  if (cl.lastPass == 4) {
    out << *modulePath << "\n";
    return finish(0);
  }
  result.modulePath = *modulePath;
  result.pid = *pid;
  result.switchesFiles =
      cl.outputFile && (cl.command || *pid) && sema::callsBuiltin(fe.script(), "switch_file");
}

} // namespace

int runDriver(const CommandLine &cl, std::ostream &out, std::ostream &err) {
  if (cl.showHelp) {
    out << helpText();
    return 0;
  }
  if (cl.showVersion) {
    out << "Sonde " << SONDE_VERSION << " (SystemTap 5.5 language)\n";
    return 0;
  }
  CompiledScript compiled;
  std::string error;
  if (!runOnCompilerStack([&] { compileScript(cl, out, err, compiled); }, &error)) {
    err << "sonde: " << error << "\n";
    return 1;
  }
  if (compiled.status)
    return *compiled.status;
  return runPass5(compiled.modulePath, cl, compiled.pid, compiled.switchesFiles, err);
}

} // namespace sonde
