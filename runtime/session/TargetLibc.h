// What sonde -x needs to know of a running target's C library and loader
// before it makes one of its threads load the agent: where libc's functions
// are, libc's __restore_rt (the way back through a resume frame), and the code
// a thread must not be inside of when it is borrowed (SafePoint.h).
#pragma once

#include "runtime/session/SafePoint.h"

#include <cstdint>
#include <optional>
#include <string>
#include <sys/types.h>

namespace sonde::session {

struct TargetLibc {
  std::string file; // a path sonde can read the mapped libc at
  uint64_t bias = 0;
  // Runtime addresses in the target.
  uint64_t dlopen = 0, dlsym = 0, dlerror = 0, mmap = 0, munmap = 0, restoreRt = 0;
  std::vector<CodeRange> unsafe; // the loader (ld.so) and lockTakingLibcFunctions()
};

// The C library mapped in `pid`; nullopt and why not (statically linked, no
// dlopen in its libc, ...).
std::optional<TargetLibc> inspectTargetLibc(pid_t pid, std::string *error);

struct TargetMapping {
  uint64_t start = 0, end = 0;
  std::string path; // "[stack]" for the main thread's stack
};

// The mapping of `pid` holding `address` (a thread's stack), or nullopt.
std::optional<TargetMapping> mappingAt(pid_t pid, uint64_t address);

} // namespace sonde::session
