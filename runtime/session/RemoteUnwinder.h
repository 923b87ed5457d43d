// The call frames of a thread of another process that sonde holds stopped with
// ptrace, from the CFI of its code (libunwind-ptrace, loaded at run time like
// the agent's libunwind, so no binary of ours links it).
#pragma once

#include "runtime/session/SafePoint.h"

#include <cstddef>
#include <string>
#include <sys/types.h>
#include <vector>

namespace sonde::session {

// Innermost first: frame 0 is where the thread stopped; each frame's sp is
// its stack pointer (for frames above 0: where the call it made returns
// with). Stops at `max`, at the outermost frame, or where the CFI gives out;
// empty (with `error`) when libunwind-ptrace cannot be used. `complete`: the
// unwind reached the outermost frame (the CFI of _start or clone says so).
std::vector<StackFrame> unwindStoppedThread(pid_t tid, size_t max, std::string *error,
                                            bool *complete = nullptr);

} // namespace sonde::session
