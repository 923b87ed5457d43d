// Built-ins about the process a handler runs in (BuiltinAbi.h): its group and
// session, its parent's and other processes' names, its arguments, the
// namespaces' view of its ids, its owner, per-CPU clocks and the time zone sonde
// captured at startup.
#include "runtime/session/BuiltinAbi.h"
#include "runtime/session/Runtime.h"
#include "runtime/session/SessionFacts.h"
#include "runtime/values/ProcessIdentity.h"

#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <string>
#include <unistd.h>
#include <vector>

using namespace sonde::session;

namespace {

void copyOut(sonde_context *ctx, char *out, const std::string &text) {
  size_t n = std::min<size_t>(text.size(), runtimeOf(ctx).maxStringLen() - 1);
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
}

// The time zone's name; the segment holds it, so it may have lost its terminator.
std::string zoneName(const sonde_context *ctx) {
  const char *name = sessionFacts(ctx).tzName;
  return std::string(name, strnlen(name, sizeof sessionFacts(ctx).tzName));
}

// A small /proc file's text, "" if it cannot be read.
std::string readProcFile(const std::string &path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return {};
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;)
    text.append(buf, static_cast<size_t>(n));
  close(fd);
  return text;
}

std::string commOf(int64_t pid) {
  std::string comm = readProcFile("/proc/" + std::to_string(pid) + "/comm");
  if (!comm.empty() && comm.back() == '\n')
    comm.pop_back();
  return comm;
}

std::vector<std::string> arguments() {
  std::vector<std::string> args;
  std::string text = readProcFile("/proc/self/cmdline");
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\0', at);
    if (end == std::string::npos)
      end = text.size();
    args.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return args;
}

// stap's context.stp cmdline_args: arguments n to m (m < 0: to the last) joined
// by `delim`, an empty one after the first shown as "" (two quotes).
std::string joinArguments(int64_t n, int64_t m, const char *delim) {
  std::vector<std::string> args = arguments();
  std::string text;
  for (int64_t i = 0; static_cast<size_t>(i) < args.size() && (m < 0 || i <= m); ++i) {
    if (i == n)
      text = args[i];
    else if (i > n)
      text += delim + (args[i].empty() ? std::string("\"\"") : args[i]);
  }
  return text;
}

int64_t cpuClockNs(int64_t cpu) {
  if (cpu < 0 || cpu >= sysconf(_SC_NPROCESSORS_CONF))
    return 0;
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

} // namespace

extern "C" {

int64_t sonde_fn_pgrp_0(sonde_context *, uint32_t) { return getpgrp(); }
int64_t sonde_fn_sid_0(sonde_context *, uint32_t) { return getsid(0); }

// The namespaces are sonde's own (it has no --target-namespaces), where the ids
// are the usual ones.
int64_t sonde_fn_ns_pid_0(sonde_context *, uint32_t) { return sonde::values::myPid(); }
int64_t sonde_fn_ns_tid_0(sonde_context *, uint32_t) { return sonde::values::myTid(); }
int64_t sonde_fn_ns_ppid_0(sonde_context *, uint32_t) { return getppid(); }
int64_t sonde_fn_ns_pgrp_0(sonde_context *, uint32_t) { return getpgrp(); }
int64_t sonde_fn_ns_sid_0(sonde_context *, uint32_t) { return getsid(0); }
int64_t sonde_fn_ns_uid_0(sonde_context *, uint32_t) { return getuid(); }
int64_t sonde_fn_ns_euid_0(sonde_context *, uint32_t) { return geteuid(); }
int64_t sonde_fn_ns_gid_0(sonde_context *, uint32_t) { return getgid(); }
int64_t sonde_fn_ns_egid_0(sonde_context *, uint32_t) { return getegid(); }

void sonde_fn_pexecname_0(sonde_context *ctx, char *out, uint32_t) {
  copyOut(ctx, out, commOf(getppid()));
}

void sonde_fn_pid2execname_1(sonde_context *ctx, char *out, int64_t pid, uint32_t) {
  copyOut(ctx, out, pid > 0 ? commOf(pid) : std::string());
}

// 1 where the handler runs for user-mode code (marker probes), else 0.
int64_t sonde_fn_user_mode_0(sonde_context *ctx, uint32_t) {
  return runtimeOf(ctx).module->markerSite(ctx->probe_index) != nullptr && ctx->probe_data;
}

// 1 if the handler's process runs as the user who started sonde (its effective
// uid against sonde's real one, as stap's is_myproc()).
int64_t sonde_fn_is_myproc_0(sonde_context *ctx, uint32_t) {
  return geteuid() == sessionFacts(ctx).consumerUid;
}

void sonde_fn_cmdline_str_0(sonde_context *ctx, char *out, uint32_t) {
  copyOut(ctx, out, joinArguments(0, -1, " "));
}

void sonde_fn_cmdline_arg_1(sonde_context *ctx, char *out, int64_t n, uint32_t) {
  copyOut(ctx, out, joinArguments(n, n, ""));
}

void sonde_fn_cmdline_args_3(sonde_context *ctx, char *out, int64_t n, int64_t m, const char *delim,
                             uint32_t) {
  copyOut(ctx, out, joinArguments(n, m, delim));
}

int64_t sonde_fn_cpu_clock_ns_1(sonde_context *, int64_t cpu, uint32_t) { return cpuClockNs(cpu); }
int64_t sonde_fn_cpu_clock_us_1(sonde_context *, int64_t cpu, uint32_t) {
  return cpuClockNs(cpu) / 1000;
}
int64_t sonde_fn_cpu_clock_ms_1(sonde_context *, int64_t cpu, uint32_t) {
  return cpuClockNs(cpu) / 1000000;
}
int64_t sonde_fn_cpu_clock_s_1(sonde_context *, int64_t cpu, uint32_t) {
  return cpuClockNs(cpu) / 1000000000;
}

// Seconds west of UTC, as stap's tz_gmtoff().
int64_t sonde_fn_tz_gmtoff_0(sonde_context *ctx, uint32_t) {
  return sessionFacts(ctx).tzSecondsWest;
}
void sonde_fn_tz_name_0(sonde_context *ctx, char *out, uint32_t) {
  copyOut(ctx, out, zoneName(ctx));
}

// stap's tzinfo.stp: ctime(secs - tz_gmtoff()) . " " . tz_name().
void sonde_fn_tz_ctime_1(sonde_context *ctx, char *out, int64_t secs, uint32_t loc) {
  sonde_fn_ctime_1(ctx, out, secs - sessionFacts(ctx).tzSecondsWest, loc);
  if (ctx->error)
    return;
  copyOut(ctx, out, std::string(out) + " " + zoneName(ctx));
}

} // extern "C"
