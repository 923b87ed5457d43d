#include "runtime/session/StoppedThread.h"

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

// Below the stack pointer: the 128-byte red zone, then room for our bytes.
constexpr uint64_t kRedZone = 128;
constexpr size_t kMaxVectorState = 16384;
constexpr uint64_t kDirectionFlag = 0x400;

std::string ptraceError(const char *what, int err) {
  if (err == ESRCH)
    return std::string("no such process (") + what + ")";
  if (err == EPERM)
    return std::string("not permitted to trace it (") + what +
           ": Operation not permitted; tracing another user's process needs root or "
           "CAP_SYS_PTRACE, and a process already traced by a debugger cannot be attached)";
  return std::string(what) + ": " + std::strerror(err);
}

bool writeTarget(pid_t tid, uint64_t address, const void *data, size_t size) {
  iovec local{const_cast<void *>(data), size};
  iovec remote{reinterpret_cast<void *>(address), size};
  return process_vm_writev(tid, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(size);
}

} // namespace

bool StoppedThread::waitForStop(int *status, std::chrono::milliseconds limit, std::string *error) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    pid_t r = waitpid(tid_, status, __WALL | WNOHANG);
    if (r == tid_)
      return true;
    if (r < 0 && errno != EINTR) {
      *error = std::string("waitpid: ") + std::strerror(errno);
      return false;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      *error = "the thread did not stop within " + std::to_string(limit.count()) + " ms";
      return false;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

std::optional<StoppedThread> StoppedThread::seize(pid_t tid, std::string *error) {
  StoppedThread t;
  t.tid_ = tid;
  if (ptrace(PTRACE_SEIZE, tid, nullptr, nullptr) != 0) {
    *error = ptraceError("ptrace seize", errno);
    return std::nullopt;
  }
  t.held_ = true;
  t.since_ = std::chrono::steady_clock::now();
  if (ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr) != 0) {
    *error = ptraceError("ptrace interrupt", errno);
    return std::nullopt;
  }
  for (;;) {
    int status = 0;
    if (!t.waitForStop(&status, std::chrono::seconds(2), error))
      return std::nullopt;
    if (!WIFSTOPPED(status)) {
      t.held_ = false;
      *error = "it ended while being stopped";
      return std::nullopt;
    }
    if ((status >> 16) == PTRACE_EVENT_STOP)
      break;
    // A signal on its way to the thread: let it through, the interrupt follows.
    ptrace(PTRACE_CONT, tid, nullptr, reinterpret_cast<void *>(uintptr_t(WSTOPSIG(status))));
  }
  if (ptrace(PTRACE_GETREGS, tid, nullptr, &t.saved_) != 0) {
    *error = ptraceError("ptrace getregs", errno);
    return std::nullopt;
  }
  t.regsSaved_ = true;
  // The injected calls clobber vector registers the thread may hold live.
  t.vectorState_.resize(kMaxVectorState);
  for (int note : {NT_X86_XSTATE, NT_PRFPREG}) {
    iovec iov{t.vectorState_.data(), t.vectorState_.size()};
    if (ptrace(PTRACE_GETREGSET, tid, reinterpret_cast<void *>(uintptr_t(note)), &iov) == 0) {
      t.vectorState_.resize(iov.iov_len);
      t.vectorNote_ = note;
      break;
    }
  }
  if (!t.vectorNote_) {
    *error = ptraceError("ptrace getregset", errno);
    return std::nullopt;
  }
  t.scratch_ = (t.saved_.rsp - kRedZone) & ~uint64_t{15};
  return t;
}

StoppedThread::StoppedThread(StoppedThread &&o) noexcept
    : tid_(o.tid_), held_(o.held_), regsSaved_(o.regsSaved_), saved_(o.saved_),
      vectorState_(std::move(o.vectorState_)), vectorNote_(o.vectorNote_), scratch_(o.scratch_),
      since_(o.since_), until_(o.until_) {
  o.held_ = false;
}

StoppedThread::~StoppedThread() { release(); }

std::optional<uint64_t> StoppedThread::push(const std::string &bytes, std::string *error) {
  uint64_t address = (scratch_ - bytes.size()) & ~uint64_t{15};
  if (!writeTarget(tid_, address, bytes.data(), bytes.size())) {
    *error = std::string("cannot write the target's stack: ") + std::strerror(errno);
    return std::nullopt;
  }
  scratch_ = address;
  return address;
}

std::optional<uint64_t> StoppedThread::call(uint64_t function, const std::vector<uint64_t> &args,
                                            std::chrono::milliseconds limit, std::string *error) {
  user_regs_struct r = saved_;
  // At the entry of a function (rsp + 8) is 16-aligned; the return address is 0,
  // so the return traps and hands the thread back to us.
  uint64_t sp = ((scratch_ - 64) & ~uint64_t{15}) - 8;
  uint64_t zero = 0;
  if (!writeTarget(tid_, sp, &zero, sizeof zero)) {
    *error = std::string("cannot write the target's stack: ") + std::strerror(errno);
    return std::nullopt;
  }
  unsigned long long *slots[] = {&r.rdi, &r.rsi, &r.rdx, &r.rcx, &r.r8, &r.r9};
  for (size_t i = 0; i < args.size() && i < 6; ++i)
    *slots[i] = args[i];
  r.rsp = sp;
  r.rip = function;
  r.rax = 0;
  r.orig_rax = ~0ull; // not in a system call: no restart of the interrupted one now
  r.eflags &= ~kDirectionFlag;
  if (ptrace(PTRACE_SETREGS, tid_, nullptr, &r) != 0 ||
      ptrace(PTRACE_CONT, tid_, nullptr, nullptr) != 0) {
    *error = ptraceError("ptrace", errno);
    return std::nullopt;
  }
  for (;;) {
    int status = 0;
    if (!waitForStop(&status, limit, error)) {
      ptrace(PTRACE_INTERRUPT, tid_, nullptr, nullptr);
      int ignored;
      std::string more;
      waitForStop(&ignored, std::chrono::seconds(1), &more);
      *error = "the call into the target did not return: " + *error;
      return std::nullopt;
    }
    if (!WIFSTOPPED(status)) {
      held_ = false;
      *error = "the process ended during the call (" +
               std::string(WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "exit") + ")";
      return std::nullopt;
    }
    int sig = WSTOPSIG(status);
    if ((status >> 16) == PTRACE_EVENT_STOP) {
      ptrace(PTRACE_CONT, tid_, nullptr, nullptr);
      continue;
    }
    user_regs_struct now{};
    ptrace(PTRACE_GETREGS, tid_, nullptr, &now);
    if (sig == SIGSEGV && now.rip == 0)
      return now.rax;
    if (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE || sig == SIGABRT) {
      char where[32];
      std::snprintf(where, sizeof where, "%#llx", now.rip);
      *error =
          std::string("the call faulted in the target (") + strsignal(sig) + " at " + where + ")";
      return std::nullopt;
    }
    ptrace(PTRACE_CONT, tid_, nullptr, reinterpret_cast<void *>(uintptr_t(sig)));
  }
}

std::string StoppedThread::readString(uint64_t address, size_t max) const {
  std::string out(max, '\0');
  iovec local{out.data(), max};
  iovec remote{reinterpret_cast<void *>(address), max};
  ssize_t n = process_vm_readv(tid_, &local, 1, &remote, 1, 0);
  out.resize(n > 0 ? static_cast<size_t>(n) : 0);
  size_t nul = out.find('\0');
  if (nul != std::string::npos)
    out.resize(nul);
  return out;
}

void StoppedThread::release() {
  if (!held_)
    return;
  held_ = false;
  iovec iov{vectorState_.data(), vectorState_.size()};
  if (vectorNote_)
    ptrace(PTRACE_SETREGSET, tid_, reinterpret_cast<void *>(uintptr_t(vectorNote_)), &iov);
  if (regsSaved_)
    ptrace(PTRACE_SETREGS, tid_, nullptr, &saved_);
  // From the stop our last call ended in (its SIGSEGV), signal 0 drops it.
  ptrace(PTRACE_DETACH, tid_, nullptr, nullptr);
  until_ = std::chrono::steady_clock::now();
}

std::chrono::microseconds StoppedThread::heldFor() const {
  auto end = held_ ? std::chrono::steady_clock::now() : until_;
  return std::chrono::duration_cast<std::chrono::microseconds>(end - since_);
}

} // namespace sonde::session
