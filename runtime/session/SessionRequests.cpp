#include "runtime/session/SessionRequests.h"

#include "runtime/session/RecordOutput.h"
#include "runtime/values/SegmentShadow.h"
#include "runtime/values/SessionMailbox.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace sonde::session {

namespace {

// How long the serving thread sleeps between looks when nothing wakes it.
constexpr int kIdleWaitMs = 100;

} // namespace

void SessionRequests::start() {
  if (thread_.joinable())
    return;
  thread_ = std::thread([this] {
    sonde_segment *seg = rt_.segment->abi();
    while (!stopping_.load()) {
      uint32_t seen = values::postedCount(seg);
      serve();
      values::waitPosted(seg, seen, kIdleWaitMs);
    }
  });
}

void SessionRequests::stop() {
  if (thread_.joinable()) {
    stopping_.store(true);
    values::interruptPosted(rt_.segment->abi());
    thread_.join();
  }
  serve();
}

void SessionRequests::queueCommand(const char *command) {
  std::lock_guard<std::mutex> lock(mutex_);
  commands_.emplace_back(command);
}

void SessionRequests::switchOutput() {
  std::lock_guard<std::mutex> lock(mutex_);
  switchLocked();
}

void SessionRequests::serve() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const std::string &command : commands_)
    runCommand(command);
  commands_.clear();
  sonde_segment *seg = rt_.segment->abi();
  bool took = false;
  while (std::optional<values::Mail> mail = values::takeMail(seg)) {
    took = true;
    if (mail->kind == values::MailKind::Command && commandsAccepted_)
      runCommand(mail->text);
    else if (mail->kind == values::MailKind::SwitchFile && switchesAccepted_)
      switchLocked();
    else
      values::noteSegmentCorruption(&values::segmentHeader(seg).mailbox,
                                    "its mailbox holds a request of kind " +
                                        std::to_string(static_cast<uint32_t>(mail->kind)) +
                                        ", which the script never makes");
  }
  if (took)
    values::markServed(seg); // a switch_file() caller waits for this
}

// Records are written out before the switch: what was printed before
// switch_file() belongs in the file it closes.
void SessionRequests::switchLocked() {
  if (records_)
    records_->drainNow();
  std::string error;
  if (!rt_.output->switchFile(&error))
    warn("switch_file(): " + error + "; output stays in the current file");
}

// stap's stapio: a child that closes every descriptor but the standard ones and
// forks the command (sh -c) as a grandchild, so sonde neither waits for the
// command nor leaves a zombie, and the command holds none of the session's
// pipes (a traced process's control pipe would never reach EOF). _Fork: no
// atfork handlers; the children only make system calls until exec.
void SessionRequests::runCommand(const std::string &command) {
  const char *text = command.c_str();
  pid_t child = _Fork();
  if (child < 0) {
    warn(std::string("system(): cannot start '") + text + "': " + std::strerror(errno));
    return;
  }
  if (child == 0) {
    syscall(SYS_close_range, 3u, ~0u, 0u);
    pid_t grandchild = _Fork();
    if (grandchild != 0)
      _exit(grandchild < 0 ? 1 : 0);
    // sonde blocks the signals it takes through a signalfd; the command must not.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execl("/bin/sh", "sh", "-c", text, static_cast<char *>(nullptr));
    _exit(127);
  }
  while (waitpid(child, nullptr, 0) < 0 && errno == EINTR) {
  }
}

void SessionRequests::warn(const std::string &text) {
  std::string line = "WARNING: " + text + "\n";
  (void)!::write(rt_.errorFd, line.data(), line.size());
}

} // namespace sonde::session
