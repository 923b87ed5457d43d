// One thread of another process held in a ptrace stop and made to call
// functions of its own process: how sonde -x loads the agent into a running
// target. Seized, not attached (no SIGSTOP): the process's other threads keep
// running, and this one is stopped only while it is held.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <sys/types.h>
#include <sys/user.h>
#include <vector>

namespace sonde::session {

class StoppedThread {
public:
  // Seizes thread `tid` and stops it; nullopt and a message saying why not
  // (no such thread, not permitted, ...).
  static std::optional<StoppedThread> seize(pid_t tid, std::string *error);

  StoppedThread(StoppedThread &&other) noexcept;
  StoppedThread &operator=(StoppedThread &&) = delete;
  ~StoppedThread(); // release()

  // Copies `bytes` into scratch space below the thread's stack (past the red
  // zone); returns their address in the target.
  std::optional<uint64_t> push(const std::string &bytes, std::string *error);
  // Calls function(args...) (at most six integer arguments) on the thread and
  // returns its rax. The thread's registers and vector state are restored by
  // release(), not after each call. A signal the thread receives meanwhile is
  // delivered to it; a crash or a call running longer than `limit` is an error.
  std::optional<uint64_t> call(uint64_t function, const std::vector<uint64_t> &args,
                               std::chrono::milliseconds limit, std::string *error);
  // Reads a NUL-terminated string of the target (at most `max` bytes).
  std::string readString(uint64_t address, size_t max) const;

  // Puts back the registers and vector state the thread was stopped with and
  // lets it go (an interrupted system call restarts). Idempotent.
  void release();
  // How long the thread has been held (until release()).
  std::chrono::microseconds heldFor() const;

private:
  StoppedThread() = default;
  bool waitForStop(int *status, std::chrono::milliseconds limit, std::string *error);

  pid_t tid_ = -1;
  bool held_ = false;
  bool regsSaved_ = false; // saved_ holds the registers it was stopped with
  user_regs_struct saved_{};
  std::vector<unsigned char> vectorState_; // NT_X86_XSTATE (or NT_PRFPREG)
  int vectorNote_ = 0;
  uint64_t scratch_ = 0; // the lowest scratch byte used so far
  std::chrono::steady_clock::time_point since_, until_;
};

} // namespace sonde::session
