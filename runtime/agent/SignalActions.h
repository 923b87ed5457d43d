// What lets the agent read the target's memory in place (runtime/session/
// UserCopy.h) without ever harming it: our SIGSEGV/SIGBUS handler resumes a
// faulting load of the copy routines at its error path and gives every other
// fault to the program's own action; the program's actions are kept as it set
// them (the sigaction family is interposed, SignalInterpose.cpp) while our
// handlers stay installed, its other handlers wrapped; and per thread, whether
// SIGSEGV or SIGBUS is blocked (a fault then kills whatever the handler), asked
// of the kernel once and kept until something may have changed the mask.
#pragma once

#include <csignal>

namespace sonde::agent {

// Preloaded agent (-c) only, where the program's signal calls reach us: takes
// over SIGSEGV/SIGBUS, wraps the program's handlers and opens the in-place read
// gate. Once per process; on failure the gate stays closed.
void installFaultHandling();

// installFaultHandling() succeeded: the program's actions are ours to keep.
bool signalActionsInterposed();

// The interposed calls' cores: the program's view of its actions, and mask
// changes (pthread_sigmask's convention: 0 or an errno value).
int setSignalAction(int sig, const struct sigaction *act, struct sigaction *old);
int changeSignalMask(int how, const sigset_t *set, sigset_t *old);

// Before a call that may change the thread's mask and not return (siglongjmp,
// setcontext, swapcontext): what this thread knew of its mask is forgotten.
void signalMaskChanging();

} // namespace sonde::agent
