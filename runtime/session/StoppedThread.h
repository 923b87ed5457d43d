// One thread of another process held with ptrace: how sonde -x makes a running
// target load the agent. Seized, not attached (no SIGSTOP): the process's other
// threads keep running. sonde never sets PTRACE_O_EXITKILL, and never leaves
// the thread in a state it cannot leave by itself: if sonde dies, ptrace lets
// the thread go as it is, so the caller changes its registers only to code
// that ends by restoring them (ResumeFrame.h).
#pragma once

#include "runtime/session/ResumeFrame.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <sys/user.h>
#include <vector>

namespace sonde::session {

class StoppedThread {
public:
  // Seizes thread `tid` and stops it; its registers, vector state and signal
  // mask are read. nullopt and a message saying why not (no such thread, not
  // permitted, ...).
  static std::optional<StoppedThread> seize(pid_t tid, std::string *error);

  StoppedThread(StoppedThread &&other) noexcept;
  StoppedThread &operator=(StoppedThread &&) = delete;
  ~StoppedThread(); // detach()

  pid_t tid() const { return tid_; }
  // False once detached, or once the thread has ended.
  bool held() const { return held_; }
  // As it was stopped (or at the last capture()).
  const StoppedState &state() const { return state_; }
  // Reads the registers, vector state and signal mask of the stop it is in.
  bool capture(std::string *error);

  // The process's memory (process_vm_readv/writev: the thread may be running).
  bool read(uint64_t address, void *out, size_t size) const;
  bool write(uint64_t address, const void *data, size_t size) const;
  std::string readString(uint64_t address, size_t max) const;
  // Writes into a mapping without write permission (PTRACE_POKEDATA); the
  // thread must be stopped.
  bool poke(uint64_t address, std::string_view bytes, std::string *error);

  // From a stop: sets `regs` and lets the thread run until the exit of its next
  // system call number `nr` whose first arguments are `args`, where it stops
  // again; returns that call's result. Signals are delivered on the way.
  std::optional<uint64_t> runToSyscallExit(const user_regs_struct &regs, long nr,
                                           const std::vector<uint64_t> &args,
                                           std::chrono::milliseconds limit, std::string *error);
  // From a stop: lets the thread run (registers as they are) until a
  // system call's exit with the instruction pointer at `rip`, where it stops.
  bool runToSyscallExitAt(uint64_t rip, std::chrono::milliseconds limit, std::string *error);
  // From a stop: sets `regs` and lets the thread run.
  bool resume(const user_regs_struct &regs, std::string *error);
  // While it runs: waits until `ready()` (checked every few tens of
  // microseconds), delivering its signals. False with a message when the limit
  // passes first or the process ends.
  bool waitUntil(const std::function<bool()> &ready, std::chrono::milliseconds limit,
                 std::string *error);
  // Stops the running thread again; its instruction pointer then.
  std::optional<uint64_t> stop(std::string *error);

  // Lets the thread go with its registers as they are. Idempotent.
  void detach();
  // How long the thread has been held (until detach()).
  std::chrono::microseconds heldFor() const;

private:
  StoppedThread() = default;
  enum class Wait { Stopped, Ended, TimedOut, Failed };
  Wait waitFor(int *status, std::chrono::steady_clock::time_point deadline, std::string *error);
  bool awaitInterruptStop(std::chrono::milliseconds limit, std::string *error);

  pid_t tid_ = -1;
  bool held_ = false;
  StoppedState state_;
  std::chrono::steady_clock::time_point since_, until_;
};

} // namespace sonde::session
