// The libc calls that set signal actions or change a thread's signal mask,
// interposed (the preloaded agent is first in the global scope) so that the
// agent's SIGSEGV/SIGBUS handlers stay installed while the program sees its own
// actions, and so that each thread's known mask is forgotten when it may change
// (SignalActions.h). Before installFaultHandling(), or with -x (nothing reaches
// these), each is libc's.
#include "runtime/agent/SignalActions.h"

#include <cerrno>
#include <csetjmp>
#include <csignal>
#include <cstring>
#include <dlfcn.h>
#include <pthread.h>
#include <ucontext.h>

extern "C" void __longjmp_chk(struct __jmp_buf_tag env[1], int val) __attribute__((noreturn));

using namespace sonde::agent;

namespace {

template <class F> F next(const char *name) { return reinterpret_cast<F>(dlsym(RTLD_NEXT, name)); }

using Handler = void (*)(int);
using SignalFn = Handler (*)(int, Handler);
using JumpFn = void (*)(struct __jmp_buf_tag *, int);
using SetContextFn = int (*)(const ucontext_t *);
using SwapContextFn = int (*)(ucontext_t *, const ucontext_t *);

// libc's own, resolved as the agent loads (these run in signal handlers, where
// dlsym must not), or at first use if another library's constructor comes first.
JumpFn realLongjmp, realSiglongjmp, realUnderscoreLongjmp, realLongjmpChk;
SetContextFn realSetcontext;
SwapContextFn realSwapcontext;
SignalFn realSignal, realBsdSignal, realSsignal, realSysvSignal, realUnderscoreSysvSignal,
    realSigset;
int (*realSigignore)(int);
int (*realSiginterrupt)(int, int);
template <class F> F resolved(F &f, const char *name) {
  if (!f)
    f = next<F>(name);
  return f;
}
__attribute__((constructor)) void resolveLibcCalls() {
  resolved(realLongjmp, "longjmp");
  resolved(realSiglongjmp, "siglongjmp");
  resolved(realUnderscoreLongjmp, "_longjmp");
  resolved(realLongjmpChk, "__longjmp_chk");
  resolved(realSetcontext, "setcontext");
  resolved(realSwapcontext, "swapcontext");
  resolved(realSignal, "signal");
  resolved(realBsdSignal, "bsd_signal");
  resolved(realSsignal, "ssignal");
  resolved(realSysvSignal, "sysv_signal");
  resolved(realUnderscoreSysvSignal, "__sysv_signal");
  resolved(realSigset, "sigset");
  resolved(realSigignore, "sigignore");
  resolved(realSiginterrupt, "siginterrupt");
}

// siginterrupt's choice, which signal() follows (as glibc's _sigintr).
sigset_t interruptible;

// signal(), sysv_signal(), sigset() and sigignore() as glibc builds them on
// sigaction: the previous handler, or SIG_ERR.
Handler setHandler(int sig, Handler handler, int flags, bool maskSelf) {
  struct sigaction act, old;
  std::memset(&act, 0, sizeof act);
  act.sa_handler = handler;
  act.sa_flags = flags;
  sigemptyset(&act.sa_mask);
  if (maskSelf && sigaddset(&act.sa_mask, sig) != 0)
    return SIG_ERR;
  return setSignalAction(sig, &act, &old) == 0 ? old.sa_handler : SIG_ERR;
}

Handler bsdSignal(int sig, Handler handler) {
  int flags = sigismember(&interruptible, sig) == 1 ? 0 : SA_RESTART;
  return setHandler(sig, handler, flags, true);
}

int maskOne(int how, int sig, sigset_t *old) {
  sigset_t set;
  sigemptyset(&set);
  if (sigaddset(&set, sig) != 0)
    return -1;
  int rc = changeSignalMask(how, &set, old);
  if (rc != 0) {
    errno = rc;
    return -1;
  }
  return 0;
}

} // namespace

extern "C" {

int sigaction(int sig, const struct sigaction *act, struct sigaction *old) noexcept {
  return setSignalAction(sig, act, old);
}

int __sigaction(int sig, const struct sigaction *act, struct sigaction *old) {
  return setSignalAction(sig, act, old);
}

Handler signal(int sig, Handler handler) noexcept {
  return signalActionsInterposed() ? bsdSignal(sig, handler)
                                   : resolved(realSignal, "signal")(sig, handler);
}

Handler bsd_signal(int sig, Handler handler) noexcept {
  return signalActionsInterposed() ? bsdSignal(sig, handler)
                                   : resolved(realBsdSignal, "bsd_signal")(sig, handler);
}

Handler ssignal(int sig, Handler handler) noexcept {
  return signalActionsInterposed() ? bsdSignal(sig, handler)
                                   : resolved(realSsignal, "ssignal")(sig, handler);
}

Handler sysv_signal(int sig, Handler handler) noexcept {
  return signalActionsInterposed() ? setHandler(sig, handler, SA_RESETHAND | SA_NODEFER, false)
                                   : resolved(realSysvSignal, "sysv_signal")(sig, handler);
}

Handler __sysv_signal(int sig, Handler handler) noexcept {
  return signalActionsInterposed()
             ? setHandler(sig, handler, SA_RESETHAND | SA_NODEFER, false)
             : resolved(realUnderscoreSysvSignal, "__sysv_signal")(sig, handler);
}

Handler sigset(int sig, Handler disposition) noexcept {
  if (!signalActionsInterposed())
    return resolved(realSigset, "sigset")(sig, disposition);
  sigset_t oldMask;
  struct sigaction old;
  if (disposition == SIG_HOLD) {
    if (maskOne(SIG_BLOCK, sig, &oldMask) != 0 || setSignalAction(sig, nullptr, &old) != 0)
      return SIG_ERR;
  } else {
    struct sigaction act;
    std::memset(&act, 0, sizeof act);
    act.sa_handler = disposition;
    sigemptyset(&act.sa_mask);
    if (setSignalAction(sig, &act, &old) != 0 || maskOne(SIG_UNBLOCK, sig, &oldMask) != 0)
      return SIG_ERR;
  }
  return sigismember(&oldMask, sig) == 1 ? SIG_HOLD : old.sa_handler;
}

int sigignore(int sig) noexcept {
  if (!signalActionsInterposed())
    return resolved(realSigignore, "sigignore")(sig);
  return setHandler(sig, SIG_IGN, 0, false) == SIG_ERR ? -1 : 0;
}

int siginterrupt(int sig, int interrupt) noexcept {
  if (!signalActionsInterposed())
    return resolved(realSiginterrupt, "siginterrupt")(sig, interrupt);
  struct sigaction act;
  if (setSignalAction(sig, nullptr, &act) != 0)
    return -1;
  if (interrupt) {
    sigaddset(&interruptible, sig);
    act.sa_flags &= ~SA_RESTART;
  } else {
    sigdelset(&interruptible, sig);
    act.sa_flags |= SA_RESTART;
  }
  return setSignalAction(sig, &act, nullptr);
}

int sigprocmask(int how, const sigset_t *set, sigset_t *old) noexcept {
  int rc = changeSignalMask(how, set, old);
  if (rc == 0)
    return 0;
  errno = rc;
  return -1;
}

int pthread_sigmask(int how, const sigset_t *set, sigset_t *old) noexcept {
  return changeSignalMask(how, set, old);
}

int sighold(int sig) noexcept { return maskOne(SIG_BLOCK, sig, nullptr); }

int sigrelse(int sig) noexcept { return maskOne(SIG_UNBLOCK, sig, nullptr); }

// The jumps restore a saved mask (siglongjmp's, a context's) and do not return.
void longjmp(struct __jmp_buf_tag env[1], int val) noexcept {
  signalMaskChanging();
  resolved(realLongjmp, "longjmp")(env, val);
  __builtin_unreachable();
}

void _longjmp(struct __jmp_buf_tag env[1], int val) noexcept {
  signalMaskChanging();
  resolved(realUnderscoreLongjmp, "_longjmp")(env, val);
  __builtin_unreachable();
}

void siglongjmp(sigjmp_buf env, int val) noexcept {
  signalMaskChanging();
  resolved(realSiglongjmp, "siglongjmp")(env, val);
  __builtin_unreachable();
}

void __longjmp_chk(struct __jmp_buf_tag env[1], int val) {
  signalMaskChanging();
  resolved(realLongjmpChk, "__longjmp_chk")(env, val);
  __builtin_unreachable();
}

int setcontext(const ucontext_t *ucp) noexcept {
  signalMaskChanging();
  return resolved(realSetcontext, "setcontext")(ucp);
}

int swapcontext(ucontext_t *oucp, const ucontext_t *ucp) noexcept {
  signalMaskChanging();
  int rc = resolved(realSwapcontext, "swapcontext")(oucp, ucp);
  signalMaskChanging();
  return rc;
}

} // extern "C"
