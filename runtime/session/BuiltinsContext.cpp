// Built-ins about time and the running process (BuiltinAbi.h).
#include "runtime/session/BuiltinAbi.h"
#include "runtime/session/Runtime.h"
#include "runtime/values/ProcessIdentity.h"

#include <cstdio>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <sched.h>
#include <sys/prctl.h>
#include <unistd.h>
#include <x86intrin.h>

using namespace sonde::session;

namespace {

int64_t clockNs(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

void copyOut(sonde_context *ctx, char *out, const char *text, size_t len) {
  size_t cap = runtimeOf(ctx).maxStringLen();
  if (len > cap - 1)
    len = cap - 1;
  std::memcpy(out, text, len);
  out[len] = '\0';
}

void copyOut(sonde_context *ctx, char *out, const char *text) {
  copyOut(ctx, out, text, std::strlen(text));
}

} // namespace

extern "C" {

int64_t sonde_fn_gettimeofday_s_0(sonde_context *, uint32_t) {
  return clockNs(CLOCK_REALTIME) / 1000000000;
}
int64_t sonde_fn_gettimeofday_ms_0(sonde_context *, uint32_t) {
  return clockNs(CLOCK_REALTIME) / 1000000;
}
int64_t sonde_fn_gettimeofday_us_0(sonde_context *, uint32_t) {
  return clockNs(CLOCK_REALTIME) / 1000;
}
int64_t sonde_fn_gettimeofday_ns_0(sonde_context *, uint32_t) { return clockNs(CLOCK_REALTIME); }
int64_t sonde_fn_local_clock_s_0(sonde_context *, uint32_t) {
  return clockNs(CLOCK_MONOTONIC) / 1000000000;
}
int64_t sonde_fn_local_clock_ms_0(sonde_context *, uint32_t) {
  return clockNs(CLOCK_MONOTONIC) / 1000000;
}
int64_t sonde_fn_local_clock_us_0(sonde_context *, uint32_t) {
  return clockNs(CLOCK_MONOTONIC) / 1000;
}
int64_t sonde_fn_local_clock_ns_0(sonde_context *, uint32_t) { return clockNs(CLOCK_MONOTONIC); }
int64_t sonde_fn_ktime_get_ns_0(sonde_context *, uint32_t) { return clockNs(CLOCK_MONOTONIC); }
int64_t sonde_fn_get_cycles_0(sonde_context *, uint32_t) { return static_cast<int64_t>(__rdtsc()); }

// Cached: each is a system call, about a microsecond here, and scripts key
// arrays by them on every event.
int64_t sonde_fn_pid_0(sonde_context *, uint32_t) { return sonde::values::myPid(); }
int64_t sonde_fn_tid_0(sonde_context *, uint32_t) { return sonde::values::myTid(); }
int64_t sonde_fn_ppid_0(sonde_context *, uint32_t) { return getppid(); }
int64_t sonde_fn_uid_0(sonde_context *, uint32_t) { return getuid(); }
int64_t sonde_fn_euid_0(sonde_context *, uint32_t) { return geteuid(); }
int64_t sonde_fn_gid_0(sonde_context *, uint32_t) { return getgid(); }
int64_t sonde_fn_egid_0(sonde_context *, uint32_t) { return getegid(); }
int64_t sonde_fn_cpu_0(sonde_context *, uint32_t) {
  int cpu = sched_getcpu();
  return cpu < 0 ? 0 : cpu;
}
int64_t sonde_fn_target_0(sonde_context *ctx, uint32_t) { return runtimeOf(ctx).target; }
int64_t sonde_fn_stp_pid_0(sonde_context *ctx, uint32_t) { return runtimeOf(ctx).consumerPid; }

void sonde_fn_execname_0(sonde_context *ctx, char *out, uint32_t) {
  char comm[17] = {};
  prctl(PR_GET_NAME, comm, 0, 0, 0);
  copyOut(ctx, out, comm);
}

void sonde_fn_pp_0(sonde_context *ctx, char *out, uint32_t) {
  copyOut(ctx, out, runtimeOf(ctx).module->probe(ctx->probe_index).pp);
}

void sonde_fn_pn_0(sonde_context *ctx, char *out, uint32_t) {
  copyOut(ctx, out, runtimeOf(ctx).module->probe(ctx->probe_index).pn);
}

void sonde_fn_probe_type_0(sonde_context *ctx, char *out, uint32_t) {
  switch (runtimeOf(ctx).module->probe(ctx->probe_index).kind) {
  case SONDE_PROBE_BEGIN:
  case SONDE_PROBE_END:
  case SONDE_PROBE_ERROR: copyOut(ctx, out, "begin_end"); return;
  case SONDE_PROBE_TIMER: copyOut(ctx, out, "hrtimer"); return;
  case SONDE_PROBE_MARKER: copyOut(ctx, out, "uprobe"); return;
  default: copyOut(ctx, out, "utrace"); return;
  }
}

// Like stap, the environment the process started with (its initial block, as
// /proc/self/environ shows it), not what setenv() changed since. The agent's
// SONDE_AGENT_* variables are sonde's, not the process's. Read in pieces on the
// stack: handlers at 1-byte sites run in a signal handler (no malloc).
void sonde_fn_env_var_1(sonde_context *ctx, char *out, const char *name, uint32_t) {
  out[0] = '\0';
  size_t nameLen = std::strlen(name);
  if (nameLen == 0 || std::strncmp(name, "SONDE_AGENT_", 12) == 0)
    return;
  int fd = open("/proc/self/environ", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return;
  size_t cap = runtimeOf(ctx).maxStringLen(), len = 0, pos = 0;
  bool matching = true, copying = false, done = false;
  char buf[4096];
  ssize_t n;
  while (!done && (n = read(fd, buf, sizeof buf)) > 0)
    for (ssize_t i = 0; i < n && !done; ++i) {
      char c = buf[i];
      if (copying) {
        done = c == '\0';
        if (!done && len < cap - 1)
          out[len++] = c;
      } else if (c == '\0') {
        pos = 0;
        matching = true;
      } else if (matching && pos < nameLen && c == name[pos]) {
        ++pos;
      } else {
        copying = matching && pos == nameLen && c == '=';
        matching = false;
      }
    }
  close(fd);
  out[len] = '\0';
}

} // extern "C"
