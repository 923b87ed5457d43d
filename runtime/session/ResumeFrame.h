// The state a thread was stopped in, written as a Linux x86-64 rt_sigreturn
// frame on the thread's own stack. Code sonde makes the thread run (-x) ends by
// returning into libc's __restore_rt with the stack pointer at this frame: the
// kernel then puts back every register, the vector state and the signal mask,
// and the interrupted system call is issued again. The thread gets back to
// where it was by itself, whether or not sonde is still there to help.
#pragma once

#include <cstdint>
#include <string>
#include <sys/user.h>
#include <vector>

namespace sonde::session {

struct StoppedState {
  user_regs_struct regs{};
  // PTRACE_GETREGSET NT_X86_XSTATE (XSAVE layout), or NT_PRFPREG (512-byte
  // FXSAVE) where the kernel has no XSAVE.
  std::vector<uint8_t> vectorState;
  bool xsave = false;
  uint64_t blockedSignals = 0; // PTRACE_GETSIGMASK
};

struct ResumeFrame {
  uint64_t address = 0;       // where `bytes` go: the lowest byte of the frame
  uint64_t returnSlot = 0;    // == address: holds __restore_rt, popped by a `ret`
  std::vector<uint8_t> bytes; // return slot, ucontext, room for siginfo, vector state
};

// The frame for `state` placed right below `top` (exclusive; the caller leaves
// the red zone above it), returning through `restoreRt`. An interrupted system
// call (orig_rax >= 0 with a restart code in rax) is set up to be issued again
// with its original arguments.
ResumeFrame buildResumeFrame(const StoppedState &state, uint64_t top, uint64_t restoreRt);

// The registers a thread resumes with from `state`: the system call restart
// applied (what buildResumeFrame writes into the frame).
user_regs_struct resumedRegisters(const user_regs_struct &regs);

// `mov $__NR_rt_sigreturn, %rax; syscall`: glibc's __restore_rt, found by
// these bytes in libc's code.
extern const std::string kRestoreRtCode;

} // namespace sonde::session
