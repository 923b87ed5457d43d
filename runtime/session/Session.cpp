#include "runtime/session/Session.h"

#include "runtime/session/KernelProbes.h"

#include "runtime/session/AttachedProcess.h"
#include "runtime/session/CorruptionWatch.h"
#include "runtime/session/GlobalDisplay.h"
#include "runtime/session/ModuleImports.h"
#include "runtime/session/ProbeHitReport.h"
#include "runtime/session/ProbeRunner.h"
#include "runtime/session/ProbedFiles.h"
#include "runtime/session/SessionFacts.h"
#include "runtime/session/SessionRequests.h"
#include "runtime/session/TargetProcess.h"
#include "runtime/session/TimerScheduler.h"
#include "runtime/transport/OutputPaths.h"
#include "runtime/values/SegmentFormat.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <ostream>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace sonde::session {

namespace {

// Probes of `kind` in ascending sequence order (stable for equal numbers).
std::vector<uint32_t> probesOfKind(const LoadedModule &m, uint32_t kind) {
  std::vector<uint32_t> out;
  for (uint32_t i = 0; i < m.desc().probe_count; ++i)
    if (m.probe(i).kind == kind)
      out.push_back(i);
  // Equal sequence numbers keep script order.
  std::sort(out.begin(), out.end(), [&](uint32_t a, uint32_t b) {
    int64_t sa = m.probe(a).sequence, sb = m.probe(b).sequence;
    return sa != sb ? sa < sb : a < b;
  });
  return out;
}

// -G NAME=VALUE: scalar globals set before begin probes run.
bool applyGlobals(const SessionOptions &o, const LoadedModule &m, values::Segment &seg,
                  std::ostream &err) {
  const auto &layout = m.layout();
  for (const auto &[name, value] : o.globals) {
    int index = layout.find(name);
    if (index < 0) {
      err << "sonde: -G " << name << ": the script has no global '" << name << "'\n";
      return false;
    }
    const auto &g = layout.globals()[index];
    char *data = static_cast<char *>(seg.base()) + layout.placements()[index].dataOffset;
    if (g.keyCount != 0 || g.value == values::ValueKind::Stats) {
      err << "sonde: -G " << name << ": only scalar long or string globals can be set\n";
      return false;
    }
    if (g.value == values::ValueKind::Long) {
      errno = 0;
      char *end = nullptr;
      int64_t v = std::strtoll(value.c_str(), &end, 0);
      if (value.empty() || *end != '\0' || errno != 0) {
        err << "sonde: -G " << name << ": '" << value << "' is not a number\n";
        return false;
      }
      std::memcpy(data, &v, sizeof v);
    } else {
      size_t cap = layout.limits().max_string_len;
      size_t n = std::min(value.size(), cap - 1);
      std::memcpy(data, value.data(), n);
      data[n] = '\0';
    }
  }
  return true;
}

// Whether some probe runs inside traced processes (markers, process/thread
// lifecycle): only then is the agent preloaded.
bool runsInTarget(uint32_t kind) {
  return kind >= SONDE_PROBE_MARKER && kind <= SONDE_PROBE_THREAD_END;
}

bool runsInTargets(const LoadedModule &m) {
  for (uint32_t i = 0; i < m.desc().probe_count; ++i)
    if (runsInTarget(m.probe(i).kind))
      return true;
  return false;
}

// Whether the -c command's standard output goes to sonde's standard error:
// asked for, or (by default) when JSON records go to the same file as its
// standard output, which a reader must be able to parse.
bool targetStdoutToStderr(const SessionOptions &o, int outFd) {
  if (o.targetStdout != TargetStdout::Auto)
    return o.targetStdout == TargetStdout::Stderr;
  if (!o.records || o.records->format != OutputFormat::Json || o.records->consumer)
    return false;
  struct stat out, std;
  return outFd == STDOUT_FILENO || (fstat(outFd, &out) == 0 && fstat(STDOUT_FILENO, &std) == 0 &&
                                    out.st_dev == std.st_dev && out.st_ino == std.st_ino);
}

// Waits until a handler asks to stop, a signal arrives, the -T timeout, or the
// -c target exits. A -x target ending does not end the session (as with stap).
void waitForStop(Runtime &rt, int wakeFd, int signalFd, std::optional<double> timeout,
                 TargetProcess *target, AttachedProcess *attached, RecordOutput *records,
                 CorruptionWatch &damage) {
  int64_t deadlineMs = -1;
  auto now = [] {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
  };
  if (timeout)
    deadlineMs = now() + static_cast<int64_t>(*timeout * 1000);
  sonde_segment *seg = rt.segment->abi();
  while (!sonde_session_exit_requested(seg) && sonde_session_running(seg) && !damage.found()) {
    // The output's reader is gone (a closed pipe, as `sonde ... | head` leaves):
    // nothing more can be delivered, so the run ends as if by exit().
    if (values::segmentHeader(seg).output.writeErrno.load(std::memory_order_relaxed) == EPIPE)
      return;
    // A bounded wait: targets (later) stop the session through the segment only.
    int waitMs = 100;
    if (deadlineMs >= 0) {
      int64_t left = deadlineMs - now();
      if (left <= 0)
        return;
      waitMs = static_cast<int>(std::min<int64_t>(left, waitMs));
    }
    pollfd fds[5] = {{wakeFd, POLLIN, 0},
                     {signalFd, POLLIN, 0},
                     {target ? target->exitFd() : -1, POLLIN, 0},
                     {target ? target->statusFd() : -1, POLLIN, 0},
                     {attached ? attached->statusFd() : -1, POLLIN, 0}};
    if (poll(fds, 5, waitMs) <= 0)
      continue;
    if (fds[1].revents & POLLIN) {
      signalfd_siginfo info;
      if (read(signalFd, &info, sizeof info) <= 0)
        continue;
      if (info.ssi_signo != SIGUSR1)
        return;
      if (records)
        records->dump(); // the flight recorder's contents; tracing goes on
    }
    if (target && (fds[3].revents & (POLLIN | POLLHUP)))
      target->takeAgentReports(rt.errorFd);
    if (attached && (fds[4].revents & (POLLIN | POLLHUP)))
      attached->takeAgentReports(rt.errorFd);
    if (fds[2].revents & POLLIN)
      return;
  }
}

// Ends tracing in the target (and its forked children): closing the control pipe
// (-c) or socket (-x) makes each agent restore its markers and flush; end probes
// wait for that, so they see every count and print after every line the target
// produced.
void detachTarget(Runtime &rt, TargetProcess *target, AttachedProcess *attached) {
  if (target)
    target->detachAgents();
  if (attached)
    attached->detachAgent();
  timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (;;) {
    if (target) {
      target->takeAgentReports(rt.errorFd);
      target->exitStatus(); // reaps it: a dead target's agent stops counting
    }
    if (sonde_session_agent_count(rt.segment->abi()) == 0)
      return;
    timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec - start.tv_sec >= 5) {
      const char text[] = "sonde: WARNING: a traced process did not detach within 5 s\n";
      writeError(rt, text, sizeof text - 1);
      return;
    }
    usleep(1000);
  }
}

// The closing words on the -c target; returns the exit status --target-status asks for.
int reportTarget(TargetProcess &target, const LoadedModule &module, const ProbedFiles &probed,
                 const SessionOptions &o, std::ostream &err) {
  target.takeAgentReports(STDERR_FILENO);
  std::optional<int> status = target.exitStatus();
  bool needsAgent = runsInTargets(module);
  // The agent reports before the target's main runs, so a normal exit without
  // a report means it never loaded.
  if (status && WIFEXITED(*status) && needsAgent && !target.agentLoaded())
    err << "sonde: WARNING: target '" << *o.targetCommand
        << "' never loaded the agent (statically linked, setuid, or not found?): no marker "
           "probe ran\n";
  else if (needsAgent && target.released())
    for (const std::string &line : probedFilesNotSeen(probed, target.probedSeen()))
      err << "sonde: WARNING: " << line << "\n";
  if (!status) {
    if (o.verbose)
      err << "sonde: target pid " << target.pid() << " keeps running, detached\n";
    return 0;
  }
  if (WIFSIGNALED(*status))
    err << "sonde: WARNING: target '" << *o.targetCommand << "' (pid " << target.pid() << ") "
        << describeWaitStatus(*status) << "\n";
  else if (o.verbose)
    err << "sonde: target '" << *o.targetCommand << "' (pid " << target.pid() << ") "
        << describeWaitStatus(*status) << "\n";
  err.flush();
  if (!o.targetExitStatus)
    return 0;
  return WIFEXITED(*status) ? WEXITSTATUS(*status) : 128 + WTERMSIG(*status);
}

// The text transport's output, written by sonde and every traced process:
// any write error, and what it cost. Returns whether all of it was written.
bool reportTextOutput(OutputSink &sink, sonde_segment *seg, std::ostream &err) {
  sink.close();
  const values::OutputAccounting &shared = values::segmentHeader(seg).output;
  std::string failure = sink.failure();
  if (int error = shared.writeErrno.load(); failure.empty() && error != 0)
    failure = writeFailure(sink.name(), error);
  if (failure.empty())
    return true;
  err << "sonde: ERROR: " << failure;
  if (uint64_t bytes = shared.bytesLost.load(); bytes > 0)
    err << "; " << shared.linesLost.load() << " lines (" << bytes << " bytes) of output lost";
  err << "\n";
  return false;
}

} // namespace

int runSession(const std::string &modulePath, const SessionOptions &options, std::ostream &err) {
  std::string error;
  auto module = LoadedModule::open(modulePath, &error);
  if (!module) {
    err << "sonde: " << error << "\n";
    return 1;
  }
  auto segment = values::Segment::create(module->layout(), &error);
  if (!segment) {
    err << "sonde: cannot create the script state: " << error << "\n";
    return 1;
  }
  captureSessionFacts(segment->abi());

  int outFd = STDOUT_FILENO;
  if (options.outputFile && !options.rotation &&
      !(options.records && options.records->traceDirectory) &&
      !(options.records && options.records->ctfDirectory)) {
    outFd = transport::openOutputFile(*options.outputFile, &error);
    if (outFd < 0) {
      err << "sonde: -o: " << error << "\n";
      return 1;
    }
  }
  OutputSink sink(outFd, outFd == STDOUT_FILENO ? "" : *options.outputFile);
  if (outFd != STDOUT_FILENO)
    sink.adopt(*options.outputFile); // closes it; switch_file() moves to FILE.1
  if (options.rotation && !sink.rotate(*options.outputFile, options.rotation->first << 20,
                                       options.rotation->second, &error)) {
    err << "sonde: -S: " << error << "\n";
    return 1;
  }

  // SIGINT/SIGTERM end the run like exit(); every thread inherits the mask, so
  // only the signalfd sees them.
  sigset_t stopSignals, oldMask;
  sigemptyset(&stopSignals);
  sigaddset(&stopSignals, SIGINT);
  sigaddset(&stopSignals, SIGTERM);
  if (options.flightRecorder)
    sigaddset(&stopSignals, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &stopSignals, &oldMask);
  int signalFd = signalfd(-1, &stopSignals, SFD_CLOEXEC);
  int wakeFd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

  // The agent runs handlers in processes sonde starts (-c) or attaches to (-x).
  bool attaching = !options.targetCommand && options.targetPid > 0 && runsInTargets(*module);
  if (!options.targetCommand && !attaching && runsInTargets(*module))
    for (uint32_t i = 0; i < module->desc().probe_count; ++i)
      if (runsInTarget(module->probe(i).kind)) {
        err << "sonde: WARNING: " << module->probe(i).pp
            << " runs only in a process started with -c CMD (and its forked children) or "
               "attached with -x PID; without either it never fires\n";
        break;
      }

  // The injected agent interposes nothing, so it cannot see threads start or end.
  if (attaching)
    for (uint32_t i = 0; i < module->desc().probe_count; ++i)
      if (uint32_t kind = module->probe(i).kind;
          kind == SONDE_PROBE_THREAD_BEGIN || kind == SONDE_PROBE_THREAD_END) {
        err << "sonde: WARNING: " << module->probe(i).pp
            << " does not fire in a process attached with -x (thread starts and ends are "
               "seen only in processes started with -c)\n";
        break;
      }

  // A record transport: rings every handler writes (in traced processes and
  // here), drained by a thread here into the output.
  std::unique_ptr<RecordOutput> records;
  if (options.records) {
    records = RecordOutput::open(*options.records, *module, sink, &error);
    if (!records) {
      err << "sonde: " << error << "\n";
      return 1;
    }
    records->start();
  }

  // What an agent in a traced process (-c or -x) receives.
  AgentContract contract{modulePath,
                         getpid(),
                         segment->fd(),
                         outFd,
                         STDERR_FILENO,
                         records ? records->relayFd() : -1,
                         records ? records->netlinkFd() : -1,
                         records ? records->netlinkConfig() : ""};

  // The target exists (held before exec) before begin probes run, so target()
  // works there, as with stap -c.
  std::optional<TargetProcess> target;
  ProbedFiles probed = probedFiles(*module);
  if (options.targetCommand) {
    TargetSpec spec{*options.targetCommand, runsInTargets(*module) ? options.agentPath : "",
                    contract, targetStdoutToStderr(options, outFd), encodeProbedFiles(probed)};
    if (spec.stdoutToStderr && options.verbose && options.targetStdout == TargetStdout::Auto)
      err << "sonde: the target's standard output goes to standard error (JSON records go to "
             "standard output; --target-stdout=stdout keeps it there)\n";
    std::optional<TargetProcess> spawned = TargetProcess::spawn(spec, &error);
    if (!spawned) {
      err << "sonde: " << error << "\n";
      return 1;
    }
    target.emplace(std::move(*spawned));
  }

  Runtime rt;
  rt.module = &*module;
  rt.segment = &*segment;
  rt.output = &sink;
  rt.target = target ? target->pid() : options.targetPid;
  rt.consumerPid = getpid();
  rt.records = records ? &records->transport() : nullptr;
  countOutputLossesInSegment(rt);
  // This thread's record writer goes before the transport does, on every way out.
  struct RecordsStopper {
    Runtime &rt;
    ~RecordsStopper() {
      if (rt.records)
        rt.thread().stopRecords();
    }
  } recordsStopper{rt};
  rt.wake = [wakeFd] {
    uint64_t one = 1;
    (void)!write(wakeFd, &one, sizeof one);
  };
  // After the record output: its thread, which drains records, ends first.
  SessionRequests requests(rt, records.get());
  requests.acceptFromTargets(moduleImports(modulePath, "sonde_fn_system_1"),
                             moduleImports(modulePath, "sonde_fn_switch_file_0"));
  // What traced processes may write over, checked from here to the end.
  CorruptionWatch damage(*segment, module->layout(), records.get());
  rt.requests = &requests;
  if (target)
    requests.start(); // traced processes' system() and switch_file()

  // Script initializers first, then -G overrides, then begin probes.
  runGlobalInitializer(rt);
  if (!applyGlobals(options, *module, *segment, err)) {
    if (target)
      target->abandon();
    return 1;
  }

  sonde_segment *seg = segment->abi();
  const sonde_limits &limits = module->layout().limits();
  int64_t actions = limits.max_action_interruptible;

  // Like stap's kernel runtime: exit() or an error in one begin probe stops the rest.
  for (uint32_t probe : probesOfKind(*module, SONDE_PROBE_BEGIN)) {
    if (sonde_session_state(seg) != SONDE_SESSION_STARTING)
      break;
    runProbe(rt, probe, actions);
  }
  if (sonde_session_state(seg) == SONDE_SESSION_STARTING && !sonde_session_exit_requested(seg))
    sonde_session_set_state(seg, SONDE_SESSION_RUNNING);
  if (records)
    records->drainNow(); // begin probes' output before the target's
  rt.kernel = options.kernel;
  bool startFailed = false;
  if (rt.kernel && sonde_session_running(seg)) {
    if (!rt.kernel->start(rt, &error)) {
      err << "sonde: " << error << "\n";
      sonde_session_set_state(seg, SONDE_SESSION_ERROR);
      rt.kernel = nullptr;
      startFailed = true;
      if (target)
        target->abandon(); // the command never runs untraced
    } else if (options.verbose) {
      err << "sonde: " << rt.kernel->attachment() << "\n";
    }
  }

  // -x: attached once begin probes have run, so that process.begin, which the
  // agent runs as it starts, sees the session running.
  std::optional<AttachedProcess> attached;
  if (attaching && sonde_session_running(seg)) {
    AttachSpec spec{static_cast<pid_t>(options.targetPid), options.agentPath, contract};
    std::optional<AttachedProcess> a = AttachedProcess::attach(spec, &error);
    if (a) {
      attached.emplace(std::move(*a));
      requests.start(); // the traced process's system() and switch_file()
      if (options.verbose)
        err << "sonde: attached to pid " << options.targetPid << " (one thread stopped for "
            << attached->pause().count() / 1000.0 << " ms)\n";
    } else {
      err << "sonde: " << error << "\n";
      sonde_session_set_state(seg, SONDE_SESSION_ERROR);
      startFailed = true;
    }
  }

  {
    TimerScheduler timers(rt);
    if (sonde_session_running(seg)) {
      if (target)
        target->release();
      timers.start();
      waitForStop(rt, wakeFd, signalFd, options.timeoutSeconds, target ? &*target : nullptr,
                  attached ? &*attached : nullptr, records.get(), damage);
    }
    if (target && !target->exitStatus() && !sonde_session_running(seg) &&
        sonde_session_state(seg) == SONDE_SESSION_STARTING)
      target->abandon(); // begin probes ended the session: the command never runs
    if (sonde_session_state(seg) != SONDE_SESSION_ERROR)
      sonde_session_set_state(seg, SONDE_SESSION_STOPPING);
    timers.stop();
    if (rt.kernel) {
      rt.kernel->stop(); // every record of the kernel probes, and their final state
      rt.kernel->importState();
    }
    if (target || attached)
      detachTarget(rt, target ? &*target : nullptr, attached ? &*attached : nullptr);
    if (records)
      records->drainNow(); // every record of the traced processes, before end probes
  }

  // End probes and the global display trust the script state only if no traced
  // process wrote over it: damage ends the session here, as an error.
  if (damage.check(sonde_session_agent_count(seg) == 0)) {
    sonde_session_set_state(seg, SONDE_SESSION_ERROR);
    damage.report(err);
  }

  if (sonde_session_state(seg) != SONDE_SESSION_ERROR) {
    // stap's display is a synthesized end(0) probe declared last: it runs after
    // the script's end probes numbered up to 0 and before later ones.
    bool displayed = !options.displayGlobals;
    for (uint32_t probe : probesOfKind(*module, SONDE_PROBE_END)) {
      if (!displayed && module->probe(probe).sequence > 0) {
        displayGlobals(rt);
        displayed = true;
      }
      runProbe(rt, probe, actions);
    }
    if (!displayed && sonde_session_state(seg) != SONDE_SESSION_ERROR)
      displayGlobals(rt);
  }
  // Error probes run when the session failed, also when an end probe failed it.
  if (sonde_session_state(seg) == SONDE_SESSION_ERROR)
    for (uint32_t probe : probesOfKind(*module, SONDE_PROBE_ERROR))
      runProbe(rt, probe, actions);
  // stap prints it last, also after errors; not from a segment written over.
  if (!damage.found())
    printProbeHitReport(rt);
  sonde_session_set_state(seg, SONDE_SESSION_STOPPED);
  requests.stop();
  rt.thread().output->flush(sink);
  bool outputOk = true;
  if (records) {
    rt.thread().stopRecords(); // this thread's last buffer, before the last drain
    outputOk = records->finish(err);
  } else {
    outputOk = reportTextOutput(sink, seg, err);
  }

  close(signalFd);
  close(wakeFd);
  pthread_sigmask(SIG_SETMASK, &oldMask, nullptr);

  int status = 0;
  if (target)
    status = reportTarget(*target, *module, probed, options, err);
  if (attached && options.verbose)
    err << "sonde: detached from pid " << options.targetPid
        << (attached->running() ? ", which keeps running" : ", which has ended") << "\n";
  if (records)
    records->summarize(err);
  // As with stap, skipped probes fail the run only past MAXSKIPPED; the
  // WARNING line counts them either way.
  uint64_t errors = sonde_session_error_count(seg), skipped = sonde_session_skipped_count(seg);
  bool tooManySkipped = skipped > limits.max_skipped;
  bool damaged = damage.report(err);
  bool runFailed = errors > 0 || tooManySkipped || startFailed || damaged;
  char text[768];
  size_t n = tooManySkipped ? sonde_error_too_many_skipped(text, sizeof text) : 0;
  n += sonde_error_run_summary(errors, skipped, text + n, sizeof text - n);
  if (runFailed)
    n += sonde_error_pass5_failed(text + n, sizeof text - n);
  err.write(text, static_cast<std::streamsize>(n));
  err.flush();
  int exitStatus =
      !runFailed || (options.targetExitStatus && target && !startFailed && !damaged) ? status : 1;
  // Output lost to a write error always makes the exit status non-zero.
  return outputOk || exitStatus != 0 ? exitStatus : 1;
}

} // namespace sonde::session
