#include "runtime/session/Session.h"

#include "runtime/session/GlobalDisplay.h"
#include "runtime/session/ProbeRunner.h"
#include "runtime/session/TimerScheduler.h"

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

// Waits until a handler asks to stop, a signal arrives, or the -T timeout.
void waitForStop(Runtime &rt, int wakeFd, int signalFd, std::optional<double> timeout) {
  int64_t deadlineMs = -1;
  auto now = [] {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
  };
  if (timeout)
    deadlineMs = now() + static_cast<int64_t>(*timeout * 1000);
  sonde_segment *seg = rt.segment->abi();
  while (!sonde_session_exit_requested(seg) && sonde_session_running(seg)) {
    // A bounded wait: targets (later) stop the session through the segment only.
    int waitMs = 100;
    if (deadlineMs >= 0) {
      int64_t left = deadlineMs - now();
      if (left <= 0)
        return;
      waitMs = static_cast<int>(std::min<int64_t>(left, waitMs));
    }
    pollfd fds[2] = {{wakeFd, POLLIN, 0}, {signalFd, POLLIN, 0}};
    if (poll(fds, 2, waitMs) > 0 && (fds[1].revents & POLLIN)) {
      signalfd_siginfo info;
      if (read(signalFd, &info, sizeof info) > 0)
        return;
    }
  }
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

  int outFd = STDOUT_FILENO;
  if (options.outputFile) {
    outFd = open(options.outputFile->c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (outFd < 0) {
      err << "sonde: cannot open output file '" << *options.outputFile
          << "': " << std::strerror(errno) << "\n";
      return 1;
    }
  }
  OutputSink sink(outFd);

  // SIGINT/SIGTERM end the run like exit(); every thread inherits the mask, so
  // only the signalfd sees them.
  sigset_t stopSignals, oldMask;
  sigemptyset(&stopSignals);
  sigaddset(&stopSignals, SIGINT);
  sigaddset(&stopSignals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stopSignals, &oldMask);
  int signalFd = signalfd(-1, &stopSignals, SFD_CLOEXEC);
  int wakeFd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

  Runtime rt;
  rt.module = &*module;
  rt.segment = &*segment;
  rt.output = &sink;
  rt.target = options.targetPid;
  rt.consumerPid = getpid();
  rt.wake = [wakeFd] {
    uint64_t one = 1;
    (void)!write(wakeFd, &one, sizeof one);
  };

  // Script initializers first, then -G overrides, then begin probes.
  runGlobalInitializer(rt);
  if (!applyGlobals(options, *module, *segment, err))
    return 1;

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

  {
    TimerScheduler timers(rt);
    if (sonde_session_running(seg)) {
      timers.start();
      waitForStop(rt, wakeFd, signalFd, options.timeoutSeconds);
    }
    if (sonde_session_state(seg) != SONDE_SESSION_ERROR)
      sonde_session_set_state(seg, SONDE_SESSION_STOPPING);
    timers.stop();
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
  sonde_session_set_state(seg, SONDE_SESSION_STOPPED);
  rt.thread().output->flush(sink);

  close(signalFd);
  close(wakeFd);
  pthread_sigmask(SIG_SETMASK, &oldMask, nullptr);
  if (outFd != STDOUT_FILENO)
    close(outFd);

  uint64_t errors = sonde_session_error_count(seg), skipped = sonde_session_skipped_count(seg);
  if (errors == 0 && skipped == 0)
    return 0;
  char text[512];
  size_t n = sonde_error_run_summary(errors, skipped, text, sizeof text);
  n += sonde_error_pass5_failed(text + n, sizeof text - n);
  err.write(text, static_cast<std::streamsize>(n));
  err.flush();
  return 1;
}

} // namespace sonde::session
