// Running handlers inside the target: per-thread state and its registry, the
// in-handler flag that guards re-entry and detach, and the flush policy (a
// thread's output is written when its buffer fills, at thread exit, fork, exec,
// detach and process exit; never per event).
#pragma once

#include "runtime/agent/SitePatches.h"
#include "runtime/session/ModuleAbi.h"
#include "runtime/session/Runtime.h"

#include <cstdint>

namespace sonde::agent {

// Binds the dispatcher to the agent's runtime (sets rt.threadSource), picks
// the lifecycle probes that apply to this executable and starts accepting
// entries. Once per attach; a later attach (-x) starts a new generation of
// thread states.
void initDispatch(session::Runtime &rt);

// Runs probe `index` on the calling thread with ctx->probe_data = probeData,
// unless entries are stopped, the session is not running, or this thread is
// already inside a handler (then the hit counts as skipped). fromTrap: in a
// signal handler, where a thread without state cannot get one (malloc).
void runProbeHere(uint32_t index, const void *probeData, bool fromTrap);

// A marker site of the module was reached: runProbeHere for its probe, with the
// registers as probe data. `hook` is the first member of an AgentSite.
void fireSite(MarkerHook *hook, sonde_marker_frame *frame, bool fromTrap);

// Runs every lifecycle probe of `kind` (SONDE_PROBE_PROCESS_BEGIN, ...) that
// applies to this process, on the calling thread, and writes its output.
void runLifecycle(sonde_probe_kind kind);

// A thread created through pthread_create starts / ends: registers it and runs
// thread.begin; runs thread.end (once) and writes its output.
void threadStarted();
void threadFinishing();

// Stops new handler entries and waits (bounded) for the running ones; false if
// some handler was still running when it gave up.
bool stopEntries();
// Keeps a few thread states ready for threads whose first hit is a trap (a
// 1-byte site) in a process attached with -x. Not from a signal handler.
void prepareSpareStates();
// After stopEntries() and the last flush of a detach that ends this session in
// a process that lives on (-x): every thread state is retired, its buffers
// freed, so that nothing refers to the session's module, segment or channel.
void retireThreads();
// Lets handlers run again (an exec that failed).
void resumeEntries();
// Writes every registered thread's buffered output. Only with entries stopped,
// or for the calling thread alone (fork).
void flushAllThreads();
void flushThisThread();
// Output threads left in their buffers since they last ran a handler, written
// now (the control thread, every 100 ms), so a quiet thread's lines show.
void flushQuietThreads();

// fork: the prepare / parent / child halves. The child keeps only the calling
// thread in the registry.
void forkPrepare();
void forkParent();
void forkChild();

} // namespace sonde::agent
