#include "runtime/agent/HandlerDispatch.h"

#include "runtime/agent/CodePatcher.h"
#include "runtime/agent/SiteFinder.h"
#include "runtime/session/ProbeRunner.h"
#include "runtime/session/RecordWriter.h"
#include "runtime/values/SegmentFormat.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <mutex>
#include <new>
#include <optional>
#include <pthread.h>
#include <sched.h>
#include <sys/stat.h>
#include <vector>

namespace sonde::agent {

namespace {

struct AgentThread {
  AgentThread(uint32_t maxStringLen, uint32_t session) : generation(session) {
    state.emplace(maxStringLen);
  }
  // Empty once retired: the session it belonged to has detached (-x).
  std::optional<session::ThreadState> state;
  // The attach it belongs to: after a detach and a new attach (-x), a thread's
  // old state is never used again.
  const uint32_t generation;
  bool retired = false;
  std::atomic<uint32_t> inHandler{0};
  // Output waits in the thread's buffers since the last flush of a quiet thread.
  std::atomic<uint32_t> dirty{0};
  // flushQuietThreads() is writing this thread's buffers (from another thread).
  std::atomic<uint32_t> flushing{0};
  bool ended = false; // thread.end ran
  AgentThread *next = nullptr;
  AgentThread *prev = nullptr;
};

session::Runtime *runtime = nullptr;
int64_t maxAction = 0;
const std::atomic<uint32_t> *sessionState = nullptr; // in the shared segment
// Lifecycle probes that apply to this executable, by kind. Allocated, never
// freed: static destructors run before the agent's exit-time probes.
std::vector<uint32_t> *lifecycle = nullptr;

std::atomic<bool> accepting{false};
// Bumped by every attach; a thread whose state is older adopts a new one.
std::atomic<uint32_t> generation{0};
// Without membarrier the fast path needs a real fence against stopEntries().
bool strongFence = true;

// The registry: every thread with state. Guarded by registryLock.
std::mutex registryLock;
AgentThread *registry = nullptr;
// States of detached sessions whose threads have not ended: their owners may
// still hold them (`current`) and be about to look at them, so they stay
// allocated, buffers freed, until the thread ends.
AgentThread *retired = nullptr;
pthread_key_t exitKey;
pthread_once_t exitKeyOnce = PTHREAD_ONCE_INIT;

// Trivially destructible, so it survives this thread's TLS destructors.
__attribute__((tls_model("initial-exec"))) thread_local AgentThread *current = nullptr;

void link(AgentThread *&list, AgentThread *t) {
  t->next = list;
  if (list)
    list->prev = t;
  list = t;
}

void unlink(AgentThread *&list, AgentThread *t) {
  if (t->prev)
    t->prev->next = t->next;
  else
    list = t->next;
  if (t->next)
    t->next->prev = t->prev;
  t->next = t->prev = nullptr;
}

bool isCurrent(const AgentThread *t) {
  return t && t->generation == generation.load(std::memory_order_relaxed);
}

// Under the registry lock and only while entries are accepted, so that once
// stopEntries() holds the lock no thread is still setting up a state.
AgentThread *adopt() {
  std::lock_guard<std::mutex> g(registryLock);
  if (!accepting.load())
    return nullptr;
  auto *t = new (std::nothrow) AgentThread(runtime->maxStringLen(), generation.load());
  if (!t)
    return nullptr;
  if (runtime->records)
    t->state->useRecords(*runtime->records);
  link(registry, t);
  // This thread's state from a detached session: only this thread can reach it.
  if (current && current->retired) {
    unlink(retired, current);
    delete current;
  }
  current = t;
  pthread_setspecific(exitKey, t);
  return t;
}

// Last resort for threads that end without passing threadFinishing (cancelled):
// their output is written, no probe runs (the runtime's TLS is gone by now).
// `p` is the thread's latest state; older retired ones are found by owner.
void onThreadExit(void *p) {
  auto *t = static_cast<AgentThread *>(p);
  std::lock_guard<std::mutex> g(registryLock);
  if (t->retired) {
    unlink(retired, t);
  } else {
    if (!t->inHandler.load())
      t->state->output->flush(*runtime->output);
    unlink(registry, t);
  }
  current = nullptr;
  delete t;
}

// States made ready outside signal handlers for threads whose first hit is a
// trap (a 1-byte site), where malloc is off limits. Only -x needs them: the
// preloaded agent gives every thread a state when it starts. Each is in the
// registry already, owned by no thread until taken.
constexpr size_t kSpareStates = 8;
std::atomic<AgentThread *> spares[kSpareStates];

AgentThread *takeSpare() {
  for (auto &slot : spares)
    if (AgentThread *t = slot.exchange(nullptr)) {
      if (!isCurrent(t))
        continue; // left from a detached session: retireThreads() owns it
      current = t;
      // glibc stores the first keys' values in the thread descriptor: no malloc.
      pthread_setspecific(exitKey, t);
      return t;
    }
  return nullptr;
}

void createExitKey() { pthread_key_create(&exitKey, onThreadExit); }

session::ThreadState &threadStateOf(session::Runtime &) {
  AgentThread *t = current ? current : adopt();
  // Only reached from inside a handler, which guarantees a current state.
  return *t->state;
}

bool sameFile(const char *a, const char *b) {
  struct stat sa, sb;
  return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

// Marks the thread busy with its own buffers. Pairs with stopEntries() (either
// it sees inHandler, or we see !accepting) and with flushQuietThreads() (either
// it sees inHandler, or we see it flushing and wait: a write() at most).
void claimBuffers(AgentThread *t) {
  t->inHandler.store(1, std::memory_order_relaxed);
  if (strongFence)
    std::atomic_thread_fence(std::memory_order_seq_cst);
  else
    std::atomic_signal_fence(std::memory_order_seq_cst);
  while (t->flushing.load(std::memory_order_acquire))
    sched_yield();
}

bool enter(AgentThread *t) {
  if (t->inHandler.load(std::memory_order_relaxed)) {
    sonde_session_note_skipped(runtime->segment->abi());
    return false;
  }
  claimBuffers(t);
  // A thread that passed the first check before a detach and resumes after a
  // new attach meets a newer generation here, and leaves.
  if (accepting.load(std::memory_order_acquire) && isCurrent(t) &&
      sessionState->load(std::memory_order_acquire) == SONDE_SESSION_RUNNING)
    return true;
  t->inHandler.store(0, std::memory_order_release);
  return false;
}

void run(AgentThread *t, sonde_handler_fn handler, uint32_t index, const void *probeData) {
  session::runHandler(*runtime, *t->state, handler, index, maxAction, probeData,
                      session::FlushPolicy::WhenFull);
  if (!t->dirty.load(std::memory_order_relaxed))
    t->dirty.store(1, std::memory_order_relaxed);
}

void flushBuffers(AgentThread *t) { t->state->flushOutput(*runtime->output); }

// The body of every marker hit: inlined into fireSite so that a hit costs one
// call from the stub's entry to the handler.
__attribute__((always_inline)) inline void runOnThisThread(sonde_handler_fn handler, uint32_t index,
                                                           const void *probeData, bool fromTrap) {
  // Checked before the thread marks itself busy, so that once stopEntries()
  // has seen every thread idle, none marks itself busy again (it would read
  // as a thread still in a handler).
  if (!accepting.load(std::memory_order_relaxed))
    return;
  AgentThread *t = current;
  if (!isCurrent(t) && !(t = fromTrap ? takeSpare() : adopt()))
    return;
  if (!enter(t))
    return;
  // The marker promises the code around it nothing changes; a handler's
  // output write that fails (a full disk) would set errno.
  int savedErrno = errno;
  run(t, handler, index, probeData);
  errno = savedErrno;
  t->inHandler.store(0, std::memory_order_release);
}

} // namespace

void initDispatch(session::Runtime &rt) {
  runtime = &rt;
  rt.threadSource = threadStateOf;
  maxAction = rt.module->layout().limits().max_action;
  sessionState = &values::segmentHeader(rt.segment->abi()).sessionState;
  strongFence = !crossThreadFenceAvailable();
  pthread_once(&exitKeyOnce, createExitKey);
  // A previous session's table is left to threads that may still read it.
  lifecycle = new std::vector<uint32_t>[SONDE_PROBE_THREAD_END + 1];
  const sonde_module_desc &d = rt.module->desc();
  for (uint32_t i = 0; i < d.probe_count; ++i) {
    uint32_t kind = d.probes[i].kind;
    if (kind < SONDE_PROBE_PROCESS_BEGIN || kind > SONDE_PROBE_THREAD_END)
      continue;
    const char *path = d.probes[i].process_path;
    if (!path || sameFile(path, "/proc/self/exe"))
      lifecycle[kind].push_back(i);
  }
  generation.fetch_add(1);
  accepting.store(true);
  adopt();
}

void runProbeHere(uint32_t index, const void *probeData, bool fromTrap) {
  runOnThisThread(runtime->module->probe(index).handler, index, probeData, fromTrap);
}

void fireSite(MarkerHook *hook, sonde_marker_frame *frame, bool fromTrap) {
  const AgentSite &site = *reinterpret_cast<const AgentSite *>(hook);
  runOnThisThread(site.handler, site.probeIndex, frame, fromTrap);
}

void runLifecycle(sonde_probe_kind kind) {
  for (uint32_t index : lifecycle[kind])
    runProbeHere(index, nullptr, false);
  // Rare events: written at once, so process.begin output precedes the threads'.
  if (!lifecycle[kind].empty())
    flushThisThread();
}

void threadStarted() {
  if (!accepting.load())
    return;
  if (!isCurrent(current))
    adopt();
  runLifecycle(SONDE_PROBE_THREAD_BEGIN);
}

void threadFinishing() {
  AgentThread *t = current;
  if (!isCurrent(t) || t->ended)
    return;
  runLifecycle(SONDE_PROBE_THREAD_END);
  t->ended = true;
  flushThisThread();
}

bool stopEntries() {
  accepting.store(false, std::memory_order_seq_cst);
  syncAllThreads();
  // Handlers are bounded by MAXACTION; a thread stopped inside one (a debugger)
  // must not hang the target's exit, so give up after a while.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  std::lock_guard<std::mutex> g(registryLock);
  bool quiet = true;
  for (AgentThread *t = registry; t; t = t->next) {
    if (t == current)
      continue;
    while (t->inHandler.load(std::memory_order_acquire) &&
           std::chrono::steady_clock::now() < deadline)
      sched_yield();
    quiet = quiet && !t->inHandler.load(std::memory_order_acquire);
  }
  return quiet;
}

void prepareSpareStates() {
  std::lock_guard<std::mutex> g(registryLock);
  for (auto &slot : spares) {
    if (!accepting.load() || slot.load())
      continue;
    auto *t = new (std::nothrow) AgentThread(runtime->maxStringLen(), generation.load());
    if (!t)
      return;
    if (runtime->records)
      t->state->useRecords(*runtime->records);
    link(registry, t);
    slot.store(t);
  }
}

void retireThreads() {
  std::lock_guard<std::mutex> g(registryLock);
  // Spares nobody took: no thread can reach them, so they go now.
  for (auto &slot : spares)
    if (AgentThread *t = slot.exchange(nullptr)) {
      unlink(registry, t);
      delete t;
    }
  while (AgentThread *t = registry) {
    unlink(registry, t);
    t->state.reset();
    t->retired = true;
    link(retired, t);
  }
  // Threads that still hold one (a -c thread ending later, through the
  // interposed pthread_create's wrapper) now see it is not current.
  generation.fetch_add(1);
}

void resumeEntries() { accepting.store(true); }

void flushAllThreads() {
  std::lock_guard<std::mutex> g(registryLock);
  for (AgentThread *t = registry; t; t = t->next) {
    if (t->inHandler.load(std::memory_order_acquire))
      continue;
    t->state->output->flush(*runtime->output);
    if (t->state->records)
      t->state->records->flush(); // the partly filled buffer, for the consumer
  }
}

void flushThisThread() {
  AgentThread *t = current;
  if (!isCurrent(t) || t->inHandler.load())
    return;
  claimBuffers(t);
  flushBuffers(t);
  t->inHandler.store(0, std::memory_order_release);
}

void flushQuietThreads() {
  std::lock_guard<std::mutex> g(registryLock);
  bool any = false;
  for (AgentThread *t = registry; t; t = t->next)
    if (t->dirty.load(std::memory_order_relaxed)) {
      t->flushing.store(1, std::memory_order_relaxed);
      any = true;
    }
  if (!any)
    return;
  // One barrier for all threads, then each one's inHandler is current.
  if (strongFence)
    std::atomic_thread_fence(std::memory_order_seq_cst);
  else
    syncAllThreads();
  for (AgentThread *t = registry; t; t = t->next) {
    if (!t->flushing.load(std::memory_order_relaxed))
      continue;
    if (!t->inHandler.load(std::memory_order_acquire)) {
      t->dirty.store(0, std::memory_order_relaxed);
      flushBuffers(t);
    }
    t->flushing.store(0, std::memory_order_release);
  }
}

void forkPrepare() {
  flushThisThread();
  registryLock.lock();
}

void forkParent() { registryLock.unlock(); }

void forkChild() {
  // Other threads do not exist here: their states are unreachable, not freed
  // (they may have been mid-handler).
  new (&registryLock) std::mutex();
  registry = retired = nullptr;
  if (isCurrent(current)) {
    current->next = current->prev = nullptr;
    link(registry, current);
    // The inherited ring is the parent thread's, which keeps writing it.
    if (current->state->records)
      current->state->records->forgetAfterFork();
  }
  runtime->output->resetAfterFork();
}

} // namespace sonde::agent
