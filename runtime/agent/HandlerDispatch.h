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

// Binds the dispatcher to the agent's runtime (sets rt.threadSource) and picks
// the lifecycle probes that apply to this executable. Call once, single-threaded.
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

// Stops new handler entries and waits (bounded) for the running ones.
void stopEntries();
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
