// Which `syscalls:sys_enter_NAME` / `sys_exit_NAME` probes run from one program
// on `raw_syscalls:sys_enter` / `sys_exit` that tail-calls them by system call
// number, instead of each being attached to its own event.
//
// Why: the kernel waits for an RCU grace period each time a perf tracepoint
// event goes away, one event after another, so a script on every system call
// (syscall.*, syscall.*.return: 720 events) took half a minute to exit. With
// the dispatcher two events go away. The dispatched programs are unchanged:
// the raw events' records put the id and the arguments (or the return value) at
// the offsets the per-call events use. The price is a program run on every
// system call of the machine, so only scripts on many calls are dispatched.
#pragma once

#include "probes/tracepoint/TracepointFormat.h"

#include <cstdint>
#include <string>
#include <vector>

namespace sonde::probes::tracepoint {

enum class SyscallDirection : uint32_t { Enter = 0, Exit = 1 };

// A kernel probe's program, as the planner sees it.
struct TracepointProgram {
  uint32_t probeIndex;
  std::string system, event;
  const TracepointFormat *format; // null: not a tracefs-format program
  bool rawArguments = false;      // a raw tracepoint program (never dispatched)
};

// A program the dispatcher of `direction` tail-calls for system call `number`.
struct SyscallSlot {
  uint32_t probeIndex;
  SyscallDirection direction;
  uint32_t number;
};

// Dispatched only when a direction has more events than this (each one saved
// is a grace period, ~50 ms, at exit).
constexpr size_t kSyscallDispatchMinEvents = 16;

// The slots of the programs to dispatch: per direction, the per-call events
// whose record layout is the raw event's, whose call has a number, and that
// are the only program on their event (two probes on one call keep their
// order by both staying on the event); none when there are at most
// kSyscallDispatchMinEvents of them.
std::vector<SyscallSlot> planSyscallDispatch(const std::vector<TracepointProgram> &programs);

} // namespace sonde::probes::tracepoint
