#include "runtime/agent/SignalActions.h"

#include "runtime/session/UserCopy.h"

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <dlfcn.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

namespace sonde::agent {

namespace {

using SigactionFn = int (*)(int, const struct sigaction *, struct sigaction *);
using SigmaskFn = int (*)(int, const sigset_t *, sigset_t *);

// libc's own: resolved as the agent loads (dlsym must not run in a signal
// handler), or at first use if another library's constructor comes first.
int realSigaction(int sig, const struct sigaction *act, struct sigaction *old) {
  static SigactionFn f = reinterpret_cast<SigactionFn>(dlsym(RTLD_NEXT, "sigaction"));
  return f(sig, act, old);
}
int realPthreadSigmask(int how, const sigset_t *set, sigset_t *old) {
  static SigmaskFn f = reinterpret_cast<SigmaskFn>(dlsym(RTLD_NEXT, "pthread_sigmask"));
  return f(how, set, old);
}
__attribute__((constructor)) void resolveSignalCalls() {
  realSigaction(SIGSEGV, nullptr, nullptr);
  realPthreadSigmask(SIG_BLOCK, nullptr, nullptr);
}

constexpr uint64_t kFaultBits = (1ull << (SIGSEGV - 1)) | (1ull << (SIGBUS - 1));
bool isFaultSignal(int sig) { return sig == SIGSEGV || sig == SIGBUS; }

// Our actions stand in for the program's from installFaultHandling() on.
std::atomic<bool> active{false};
// In-place reads may run (cleared for good if our fault handler goes).
std::atomic<bool> gateOpen{false};
// The process whose actions the table holds: a fork child's own copy (atfork),
// but not a vfork child's, which shares the table yet has actions of its own.
std::atomic<pid_t> ownerPid{0};
void forkedChild() { ownerPid.store(getpid()); }

// ------------------------------------------------ the program's actions
// One seqlock per signal: written under `writers` with all signals blocked (so
// never interrupted by a reader on the same thread), read lock-free by handlers.
constexpr size_t kActionWords = sizeof(struct sigaction) / sizeof(uint64_t);
static_assert(sizeof(struct sigaction) % sizeof(uint64_t) == 0);
struct ActionSlot {
  std::atomic<uint32_t> seq{0};
  std::atomic<uint64_t> words[kActionWords];
};
ActionSlot actions[NSIG];
std::atomic_flag writers = ATOMIC_FLAG_INIT;

void storeAction(int sig, const struct sigaction &a) {
  uint64_t words[kActionWords];
  std::memcpy(words, &a, sizeof a);
  ActionSlot &slot = actions[sig];
  slot.seq.fetch_add(1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  for (size_t i = 0; i < kActionWords; ++i)
    slot.words[i].store(words[i], std::memory_order_relaxed);
  slot.seq.fetch_add(1, std::memory_order_release);
}

struct sigaction loadAction(int sig) {
  ActionSlot &slot = actions[sig];
  uint64_t words[kActionWords];
  uint32_t before, after;
  do {
    before = slot.seq.load(std::memory_order_acquire);
    for (size_t i = 0; i < kActionWords; ++i)
      words[i] = slot.words[i].load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    after = slot.seq.load(std::memory_order_relaxed);
  } while ((before & 1) || before != after);
  struct sigaction a;
  std::memcpy(&a, words, sizeof a);
  return a;
}

// Writers' section: all signals blocked in this thread, then the spin lock.
struct WriterSection {
  sigset_t saved;
  WriterSection() {
    sigset_t all;
    sigfillset(&all);
    realPthreadSigmask(SIG_SETMASK, &all, &saved);
    while (writers.test_and_set(std::memory_order_acquire))
      ;
  }
  ~WriterSection() {
    writers.clear(std::memory_order_release);
    realPthreadSigmask(SIG_SETMASK, &saved, nullptr);
  }
};

// ------------------------------------------------ the thread's mask
// What this thread knows of its mask: valid while `epoch` has not moved since
// (validFor == epoch + 1). Everything that may change the mask moves the epoch
// first: the mask calls, jumps, and entering or leaving a signal handler whose
// mask can differ (all but a synchronous trap that blocks neither signal).
struct ThreadMask {
  std::atomic<uint32_t> epoch;
  std::atomic<uint32_t> validFor;
  std::atomic<bool> clear;
};
thread_local ThreadMask threadMask;

void moveEpoch() { threadMask.epoch.fetch_add(1, std::memory_order_relaxed); }

void onFault(int sig, siginfo_t *info, void *context);

// The kernel's own view of SIGSEGV's and SIGBUS's actions: a program that set
// one with a raw system call, past the interposed calls, replaced ours.
bool faultHandlersStillOurs() {
  struct {
    void *handler;
    unsigned long flags;
    void *restorer;
    uint64_t mask;
  } action;
  for (int sig : {SIGSEGV, SIGBUS})
    if (syscall(SYS_rt_sigaction, sig, nullptr, &action, sizeof action.mask) != 0 ||
        action.handler != reinterpret_cast<void *>(onFault))
      return false;
  return true;
}

// SIGSEGV and SIGBUS are both unblocked in this thread (and, checked at the
// same time, still ours). No system call while the answer is known.
bool faultSignalsUnblocked() {
  ThreadMask &t = threadMask;
  uint32_t e = t.epoch.load(std::memory_order_relaxed);
  if (t.validFor.load(std::memory_order_relaxed) == e + 1)
    return t.clear.load(std::memory_order_relaxed);
  uint64_t blocked = ~0ull;
  if (syscall(SYS_rt_sigprocmask, SIG_BLOCK, nullptr, &blocked, sizeof blocked) != 0)
    return false;
  if (!faultHandlersStillOurs()) {
    gateOpen.store(false);
    return false;
  }
  bool clear = (blocked & kFaultBits) == 0;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  if (t.epoch.load(std::memory_order_relaxed) == e) {
    t.clear.store(clear, std::memory_order_relaxed);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    t.validFor.store(e + 1, std::memory_order_relaxed);
  }
  return clear;
}

bool inPlaceReadsSafe() {
  return gateOpen.load(std::memory_order_relaxed) && faultSignalsUnblocked();
}

// ------------------------------------------------ delivering to the program
bool isHandler(const struct sigaction &a) {
  return a.sa_handler != SIG_DFL && a.sa_handler != SIG_IGN;
}

// The program's action is the default one (or ignoring a fault, which the
// kernel makes fatal): put it in place and let it happen, as without us.
void takeDefault(int sig, const siginfo_t *info) {
  if (isFaultSignal(sig))
    gateOpen.store(false);
  struct sigaction dfl;
  std::memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  realSigaction(sig, &dfl, nullptr);
  // A fault recurs when its instruction runs again, with its own siginfo; a
  // signal someone sent (or an optional machine-check) is sent again.
  bool recurs = info && info->si_code > 0 && isFaultSignal(sig) &&
                !(sig == SIGBUS && info->si_code == BUS_MCEERR_AO);
  if (!recurs)
    raise(sig);
}

bool synchronous(int sig, const siginfo_t *info) {
  return info && info->si_code > 0 &&
         (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE || sig == SIGTRAP);
}

void deliverToProgram(int sig, siginfo_t *info, void *context) {
  struct sigaction a = loadAction(sig);
  if (!isHandler(a)) {
    bool fatal = a.sa_handler == SIG_DFL || (isFaultSignal(sig) && synchronous(sig, info));
    if (fatal)
      takeDefault(sig, info);
    return;
  }
  if (a.sa_flags & SA_RESETHAND) {
    // The kernel reset its own copy (ours, for SIGSEGV/SIGBUS, has no SA_RESETHAND).
    struct sigaction dfl;
    std::memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    WriterSection w;
    storeAction(sig, dfl);
  }
  uint64_t handlerMask = 0;
  std::memcpy(&handlerMask, &a.sa_mask, sizeof handlerMask);
  if (!(a.sa_flags & SA_NODEFER))
    handlerMask |= 1ull << (sig - 1);
  // A synchronous trap runs on the thread's own mask plus the handler's; any
  // other signal may arrive in sigsuspend, ppoll... with another mask.
  bool mayChangeMask = !synchronous(sig, info) || (handlerMask & kFaultBits);
  if (mayChangeMask)
    moveEpoch();
  uint32_t inside = threadMask.epoch.load(std::memory_order_relaxed);
  if (a.sa_flags & SA_SIGINFO)
    a.sa_sigaction(sig, info, context);
  else
    a.sa_handler(sig);
  if (mayChangeMask || threadMask.epoch.load(std::memory_order_relaxed) != inside)
    moveEpoch();
}

// SIGSEGV and SIGBUS: a copy routine's load resumes at its fixup; anything else
// is the program's.
void onFault(int sig, siginfo_t *info, void *context) {
  auto *uc = static_cast<ucontext_t *>(context);
  if (info && info->si_code > 0) {
    uintptr_t pc = static_cast<uintptr_t>(uc->uc_mcontext.gregs[REG_RIP]);
    if (uintptr_t fixup = session::userCopyFixup(pc)) {
      uc->uc_mcontext.gregs[REG_RIP] = static_cast<greg_t>(fixup);
      return;
    }
  }
  deliverToProgram(sig, info, context);
}

// The program's handlers of other signals, so that entering and leaving them
// moves the thread's mask epoch.
void onProgramSignal(int sig, siginfo_t *info, void *context) {
  deliverToProgram(sig, info, context);
}

// What we install for the program's action `a`: its mask and flags, our handler.
struct sigaction ourAction(int sig, const struct sigaction &a) {
  struct sigaction ours;
  std::memset(&ours, 0, sizeof ours);
  if (isFaultSignal(sig)) {
    ours.sa_sigaction = onFault;
    ours.sa_flags = SA_SIGINFO | SA_ONSTACK;
    if (isHandler(a)) {
      ours.sa_mask = a.sa_mask;
      ours.sa_flags |= a.sa_flags & (SA_RESTART | SA_NODEFER);
    } else {
      sigemptyset(&ours.sa_mask);
    }
    return ours;
  }
  if (!isHandler(a))
    return a;
  ours.sa_sigaction = onProgramSignal;
  ours.sa_mask = a.sa_mask;
  ours.sa_flags = a.sa_flags | SA_SIGINFO;
  return ours;
}

// Signals sigaction refuses (SIGKILL, SIGSTOP, glibc's own) or that do not exist.
bool ours(int sig) {
  return sig > 0 && sig < NSIG && sig != SIGKILL && sig != SIGSTOP &&
         (sig < __SIGRTMIN || sig >= SIGRTMIN);
}

} // namespace

void installFaultHandling() {
  if (active.load())
    return;
  WriterSection w;
  // SIGSEGV and SIGBUS first: if either cannot be ours, nothing else changes.
  for (int sig : {SIGSEGV, SIGBUS}) {
    struct sigaction current;
    if (realSigaction(sig, nullptr, &current) != 0)
      return;
    storeAction(sig, current);
    struct sigaction mine = ourAction(sig, current);
    if (realSigaction(sig, &mine, nullptr) != 0)
      return;
  }
  for (int sig = 1; sig < NSIG; ++sig) {
    struct sigaction current;
    if (!ours(sig) || isFaultSignal(sig) || realSigaction(sig, nullptr, &current) != 0)
      continue;
    storeAction(sig, current);
    struct sigaction mine = ourAction(sig, current);
    if (isHandler(current))
      realSigaction(sig, &mine, nullptr);
  }
  ownerPid.store(getpid());
  pthread_atfork(nullptr, nullptr, forkedChild);
  active.store(true);
  gateOpen.store(true);
  session::setInPlaceReadGate(inPlaceReadsSafe);
}

int setSignalAction(int sig, const struct sigaction *act, struct sigaction *old) {
  if (!ours(sig))
    return realSigaction(sig, act, old);
  if (active.load() && getpid() != ownerPid.load()) {
    // A vfork child: its actions are its own, the table its parent's. Its
    // handlers run (on its parent's thread state) but can no longer vouch.
    if (act && isFaultSignal(sig))
      gateOpen.store(false);
    return realSigaction(sig, act, old);
  }
  // Under the lock even before installFaultHandling(), so that it never reads
  // an action a concurrent call is replacing.
  WriterSection w;
  if (!active.load())
    return realSigaction(sig, act, old);
  struct sigaction previous = loadAction(sig);
  if (act) {
    struct sigaction mine = ourAction(sig, *act);
    if (int rc = realSigaction(sig, &mine, nullptr); rc != 0)
      return rc;
    storeAction(sig, *act);
  }
  if (old)
    *old = previous;
  return 0;
}

int changeSignalMask(int how, const sigset_t *set, sigset_t *old) {
  moveEpoch();
  int rc = realPthreadSigmask(how, set, old);
  moveEpoch();
  return rc;
}

void signalMaskChanging() { moveEpoch(); }

bool signalActionsInterposed() { return active.load(std::memory_order_relaxed); }

} // namespace sonde::agent
