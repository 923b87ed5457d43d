#include "runtime/session/StoppedThread.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <elf.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <thread>

namespace sonde::session {

namespace {

constexpr size_t kMaxVectorState = 16384;
constexpr int kSyscallStop = SIGTRAP | 0x80; // PTRACE_O_TRACESYSGOOD
constexpr auto kPoll = std::chrono::microseconds(20);

std::string ptraceError(const char *what, int err) {
  if (err == ESRCH)
    return std::string("no such process (") + what + ")";
  if (err == EPERM)
    return std::string("not permitted to trace it (") + what +
           ": Operation not permitted; tracing another user's process needs root or "
           "CAP_SYS_PTRACE, and a process already traced by a debugger cannot be attached)";
  return std::string(what) + ": " + std::strerror(err);
}

bool isEventStop(int status) { return (status >> 16) == PTRACE_EVENT_STOP; }

// The signal a signal-delivery-stop reports (to pass on), 0 for other stops.
uintptr_t signalToDeliver(int status) {
  int sig = WSTOPSIG(status);
  return isEventStop(status) || sig == kSyscallStop ? 0 : static_cast<uintptr_t>(sig);
}

} // namespace

StoppedThread::Wait StoppedThread::waitFor(int *status,
                                           std::chrono::steady_clock::time_point deadline,
                                           std::string *error) {
  for (;;) {
    pid_t r = waitpid(tid_, status, __WALL | WNOHANG);
    if (r == tid_) {
      if (WIFSTOPPED(*status))
        return Wait::Stopped;
      held_ = false;
      *error = "the process ended (" +
               std::string(WIFSIGNALED(*status) ? strsignal(WTERMSIG(*status)) : "exit") + ")";
      return Wait::Ended;
    }
    if (r < 0 && errno != EINTR) {
      *error = std::string("waitpid: ") + std::strerror(errno);
      return Wait::Failed;
    }
    if (std::chrono::steady_clock::now() >= deadline)
      return Wait::TimedOut;
    std::this_thread::sleep_for(kPoll);
  }
}

bool StoppedThread::awaitInterruptStop(std::chrono::milliseconds limit, std::string *error) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    int status = 0;
    switch (waitFor(&status, deadline, error)) {
    case Wait::Stopped: break;
    case Wait::TimedOut:
      *error = "the thread did not stop within " + std::to_string(limit.count()) + " ms";
      return false;
    default: return false;
    }
    if (isEventStop(status))
      return true;
    // A signal on its way to the thread, or the exit of a system call: let it
    // through, the interrupt's stop follows.
    ptrace(PTRACE_CONT, tid_, nullptr, reinterpret_cast<void *>(signalToDeliver(status)));
  }
}

std::optional<StoppedThread> StoppedThread::seize(pid_t tid, std::string *error) {
  StoppedThread t;
  t.tid_ = tid;
  if (ptrace(PTRACE_SEIZE, tid, nullptr, reinterpret_cast<void *>(PTRACE_O_TRACESYSGOOD)) != 0) {
    *error = ptraceError("ptrace seize", errno);
    return std::nullopt;
  }
  t.held_ = true;
  t.since_ = std::chrono::steady_clock::now();
  if (ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr) != 0) {
    *error = ptraceError("ptrace interrupt", errno);
    return std::nullopt;
  }
  if (!t.awaitInterruptStop(std::chrono::seconds(2), error) || !t.capture(error))
    return std::nullopt;
  return t;
}

bool StoppedThread::capture(std::string *error) {
  StoppedState &s = state_;
  if (ptrace(PTRACE_GETREGS, tid_, nullptr, &s.regs) != 0 ||
      ptrace(PTRACE_GETSIGMASK, tid_, reinterpret_cast<void *>(sizeof s.blockedSignals),
             &s.blockedSignals) != 0) {
    *error = ptraceError("ptrace getregs", errno);
    return false;
  }
  s.vectorState.resize(kMaxVectorState);
  for (int note : {NT_X86_XSTATE, NT_PRFPREG}) {
    iovec iov{s.vectorState.data(), s.vectorState.size()};
    if (ptrace(PTRACE_GETREGSET, tid_, reinterpret_cast<void *>(uintptr_t(note)), &iov) == 0) {
      s.vectorState.resize(iov.iov_len);
      s.xsave = note == NT_X86_XSTATE;
      return true;
    }
  }
  *error = ptraceError("ptrace getregset", errno);
  return false;
}

StoppedThread::StoppedThread(StoppedThread &&o) noexcept
    : tid_(o.tid_), held_(o.held_), state_(std::move(o.state_)), since_(o.since_),
      until_(o.until_) {
  o.held_ = false;
}

StoppedThread::~StoppedThread() { detach(); }

bool StoppedThread::read(uint64_t address, void *out, size_t size) const {
  iovec local{out, size};
  iovec remote{reinterpret_cast<void *>(address), size};
  return process_vm_readv(tid_, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(size);
}

bool StoppedThread::write(uint64_t address, const void *data, size_t size) const {
  iovec local{const_cast<void *>(data), size};
  iovec remote{reinterpret_cast<void *>(address), size};
  return process_vm_writev(tid_, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(size);
}

std::string StoppedThread::readString(uint64_t address, size_t max) const {
  std::string out(max, '\0');
  iovec local{out.data(), max};
  iovec remote{reinterpret_cast<void *>(address), max};
  ssize_t n = process_vm_readv(tid_, &local, 1, &remote, 1, 0);
  out.resize(n > 0 ? static_cast<size_t>(n) : 0);
  if (size_t nul = out.find('\0'); nul != std::string::npos)
    out.resize(nul);
  return out;
}

bool StoppedThread::poke(uint64_t address, std::string_view bytes, std::string *error) {
  for (size_t at = 0; at < bytes.size(); at += 8) {
    uint64_t word = 0;
    if (bytes.size() - at < 8) {
      // The last partial word keeps the bytes after it.
      errno = 0;
      long old = ptrace(PTRACE_PEEKDATA, tid_, reinterpret_cast<void *>(address + at), nullptr);
      if (errno != 0) {
        *error = ptraceError("ptrace peekdata", errno);
        return false;
      }
      word = static_cast<uint64_t>(old);
    }
    std::memcpy(&word, bytes.data() + at, std::min<size_t>(8, bytes.size() - at));
    if (ptrace(PTRACE_POKEDATA, tid_, reinterpret_cast<void *>(address + at),
               reinterpret_cast<void *>(word)) != 0) {
      *error = ptraceError("ptrace pokedata", errno);
      return false;
    }
  }
  return true;
}

std::optional<uint64_t> StoppedThread::runToSyscallExit(const user_regs_struct &regs, long nr,
                                                        const std::vector<uint64_t> &args,
                                                        std::chrono::milliseconds limit,
                                                        std::string *error) {
  if (ptrace(PTRACE_SETREGS, tid_, nullptr, &regs) != 0 ||
      ptrace(PTRACE_SYSCALL, tid_, nullptr, nullptr) != 0) {
    *error = ptraceError("ptrace", errno);
    return std::nullopt;
  }
  auto deadline = std::chrono::steady_clock::now() + limit;
  bool entered = false;
  for (;;) {
    int status = 0;
    Wait w = waitFor(&status, deadline, error);
    if (w == Wait::TimedOut)
      *error =
          "the call into the target did not return within " + std::to_string(limit.count()) + " ms";
    if (w != Wait::Stopped)
      return std::nullopt;
    if (WSTOPSIG(status) == kSyscallStop) {
      __ptrace_syscall_info info{};
      if (ptrace(PTRACE_GET_SYSCALL_INFO, tid_, reinterpret_cast<void *>(sizeof info), &info) <=
          0) {
        *error = ptraceError("ptrace get_syscall_info", errno);
        return std::nullopt;
      }
      if (info.op == PTRACE_SYSCALL_INFO_ENTRY)
        entered = static_cast<long>(info.entry.nr) == nr && args.size() <= 6 &&
                  std::equal(args.begin(), args.end(), info.entry.args);
      else if (info.op == PTRACE_SYSCALL_INFO_EXIT && entered)
        return static_cast<uint64_t>(info.exit.rval);
    }
    ptrace(PTRACE_SYSCALL, tid_, nullptr, reinterpret_cast<void *>(signalToDeliver(status)));
  }
}

bool StoppedThread::runToSyscallExitAt(uint64_t rip, std::chrono::milliseconds limit,
                                       std::string *error) {
  if (ptrace(PTRACE_SYSCALL, tid_, nullptr, nullptr) != 0) {
    *error = ptraceError("ptrace", errno);
    return false;
  }
  auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    int status = 0;
    Wait w = waitFor(&status, deadline, error);
    if (w == Wait::TimedOut)
      *error = "it did not get there within " + std::to_string(limit.count()) + " ms";
    if (w != Wait::Stopped)
      return false;
    if (WSTOPSIG(status) == kSyscallStop) {
      __ptrace_syscall_info info{};
      if (ptrace(PTRACE_GET_SYSCALL_INFO, tid_, reinterpret_cast<void *>(sizeof info), &info) > 0 &&
          info.op == PTRACE_SYSCALL_INFO_EXIT && info.instruction_pointer == rip)
        return true;
    }
    ptrace(PTRACE_SYSCALL, tid_, nullptr, reinterpret_cast<void *>(signalToDeliver(status)));
  }
}

bool StoppedThread::resume(const user_regs_struct &regs, std::string *error) {
  if (ptrace(PTRACE_SETREGS, tid_, nullptr, &regs) != 0 ||
      ptrace(PTRACE_CONT, tid_, nullptr, nullptr) != 0) {
    *error = ptraceError("ptrace", errno);
    return false;
  }
  return true;
}

bool StoppedThread::waitUntil(const std::function<bool()> &ready, std::chrono::milliseconds limit,
                              std::string *error) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    if (ready())
      return true;
    int status = 0;
    switch (waitFor(&status, std::chrono::steady_clock::now(), error)) {
    case Wait::Stopped:
      ptrace(PTRACE_CONT, tid_, nullptr, reinterpret_cast<void *>(signalToDeliver(status)));
      continue;
    case Wait::TimedOut: break;
    default: return false;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      *error = "it did not finish within " + std::to_string(limit.count()) + " ms";
      return false;
    }
    std::this_thread::sleep_for(kPoll);
  }
}

std::optional<uint64_t> StoppedThread::stop(std::string *error) {
  if (ptrace(PTRACE_INTERRUPT, tid_, nullptr, nullptr) != 0) {
    *error = ptraceError("ptrace interrupt", errno);
    return std::nullopt;
  }
  user_regs_struct now{};
  if (!awaitInterruptStop(std::chrono::seconds(2), error))
    return std::nullopt;
  if (ptrace(PTRACE_GETREGS, tid_, nullptr, &now) != 0) {
    *error = ptraceError("ptrace getregs", errno);
    return std::nullopt;
  }
  return now.rip;
}

void StoppedThread::detach() {
  if (!held_)
    return;
  held_ = false;
  // Only a stopped tracee can be detached; a running one is stopped first
  // (ESRCH), and one that cannot be stopped is let go when sonde exits.
  if (ptrace(PTRACE_DETACH, tid_, nullptr, nullptr) != 0 && errno == ESRCH) {
    std::string ignored;
    if (ptrace(PTRACE_INTERRUPT, tid_, nullptr, nullptr) == 0 &&
        awaitInterruptStop(std::chrono::seconds(2), &ignored))
      ptrace(PTRACE_DETACH, tid_, nullptr, nullptr);
  }
  until_ = std::chrono::steady_clock::now();
}

std::chrono::microseconds StoppedThread::heldFor() const {
  auto end = held_ ? std::chrono::steady_clock::now() : until_;
  return std::chrono::duration_cast<std::chrono::microseconds>(end - since_);
}

} // namespace sonde::session
