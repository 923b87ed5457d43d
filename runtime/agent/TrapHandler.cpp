#include "runtime/agent/TrapHandler.h"

#include "runtime/agent/SitePatches.h"
#include "runtime/agent/ThreadSweep.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <ucontext.h>

namespace sonde::agent {

namespace {

struct sigaction previous;
std::atomic<bool> installed{false};

// Not ours: behave as if we were never installed.
void chain(int sig, siginfo_t *info, void *uc) {
  if (previous.sa_flags & SA_SIGINFO) {
    previous.sa_sigaction(sig, info, uc);
  } else if (previous.sa_handler == SIG_IGN) {
    return;
  } else if (previous.sa_handler == SIG_DFL) {
    // Pending until this handler returns, then fatal as it would have been.
    signal(sig, SIG_DFL);
    raise(sig);
  } else {
    previous.sa_handler(sig);
  }
}

sonde_marker_frame frameFrom(const greg_t *g, uintptr_t site) {
  sonde_marker_frame f;
  f.r15 = g[REG_R15], f.r14 = g[REG_R14], f.r13 = g[REG_R13], f.r12 = g[REG_R12];
  f.rbp = g[REG_RBP], f.rbx = g[REG_RBX], f.r11 = g[REG_R11], f.r10 = g[REG_R10];
  f.r9 = g[REG_R9], f.r8 = g[REG_R8], f.rdi = g[REG_RDI], f.rsi = g[REG_RSI];
  f.rdx = g[REG_RDX], f.rcx = g[REG_RCX], f.rsp = g[REG_RSP];
  f.rax = g[REG_RAX];
  f.return_address = site;
  return f;
}

// Where a thread that trapped at the site goes on: past the NOP (both its
// encodings are that long), or a displaced site's relocated copy of its region
// (its bytes may be half the jmp's).
uintptr_t past(const PatchedSite *site) {
  return site->resume ? reinterpret_cast<uintptr_t>(site->resume) : site->address + site->nopSize;
}

// A sweep's question (ThreadSweep.h) and the int3 of a site share SIGTRAP, and
// a standard signal already pending swallows a second one: a question may
// arrive for a thread that has just run an int3 (rip is one past a site still
// holding the int3), which is then handled as that trap, and the question
// answered after it.
void onTrap(int sig, siginfo_t *info, void *context) {
  auto *uc = static_cast<ucontext_t *>(context);
  greg_t *g = uc->uc_mcontext.gregs;
  const bool question = isSweepQuestion(info);
  uintptr_t at = static_cast<uintptr_t>(g[REG_RIP]) - 1;
  PatchedSite *site = trapSiteAt(at);
  auto now = [&] { return reinterpret_cast<std::atomic<uint8_t> *>(at)->load(); };
  if (site && (!question || now() == 0xcc)) {
    int savedErrno = errno;
    if (MarkerHook *h = site->hook.load(std::memory_order_acquire)) {
      sonde_marker_frame frame = frameFrom(g, at);
      h->fire(h, &frame, true);
      g[REG_RIP] = static_cast<greg_t>(past(site));
    } else {
      // Detached meanwhile: rerun the restored bytes, or go past the site if
      // the int3 is still there (mid-unpatch).
      g[REG_RIP] = static_cast<greg_t>(now() == 0xcc ? past(site) : at);
    }
    errno = savedErrno;
  } else if (!question) {
    chain(sig, info, context);
    return;
  }
  if (question)
    answerSweep(uc);
}

} // namespace

bool installTrapHandler(std::string *error) {
  if (installed.load())
    return true;
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = onTrap;
  sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGTRAP, &sa, &previous) != 0) {
    *error = std::string("cannot install the SIGTRAP handler: ") + std::strerror(errno);
    return false;
  }
  installed.store(true);
  return true;
}

} // namespace sonde::agent
