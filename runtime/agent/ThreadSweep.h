// Moving threads out of a stock site's region before its bytes change (issue
// 21): while the site's first byte is an int3 (no thread can enter the region
// any more), every other thread whose instruction pointer is strictly inside
// the region is moved to the same instruction of the region's relocated copy
// in the stub. Threads blocked in the kernel outside the region are checked
// through /proc/self/task/TID/syscall; the others are asked with a SIGTRAP
// carrying a tag (rt_tgsigqueueinfo), which TrapHandler.cpp answers.
#pragma once

#include "runtime/session/ModuleAbi.h"

#include <csignal>
#include <cstdint>
#include <string>
#include <ucontext.h>

namespace sonde::agent {

// False (and why) when some thread could not be shown to be outside the region
// or moved out of it: the region's bytes must then stay as they are.
// Callers serialize (SitePatches.cpp's lock).
bool moveThreadsOutOfRegion(const sonde_displaced_code &code, uintptr_t site,
                            uintptr_t continuation, std::string *why);

// In the SIGTRAP handler: whether the signal is a sweep's question (or a late
// one from a finished sweep). Async-signal-safe.
bool isSweepQuestion(const siginfo_t *info);

// Answers a question: moves this thread if it is inside the region of the
// sweep in progress. Nothing when no sweep is. Async-signal-safe.
void answerSweep(ucontext_t *uc);

} // namespace sonde::agent
