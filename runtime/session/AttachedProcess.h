// The -x PID target: a process already running, which sonde makes load the
// agent through its own dynamic loader (one of its threads, borrowed at a safe
// point: AgentInjection.h), then hands the agent its contract over a unix
// socket (AgentHandshake.h). Closing that socket detaches the agent: it
// restores every marker and the process runs on untouched.
#pragma once

#include "runtime/session/AgentHandshake.h"
#include "runtime/session/AgentReportLines.h"

#include <chrono>
#include <optional>
#include <string>
#include <sys/types.h>

namespace sonde::session {

struct AttachSpec {
  pid_t pid = 0;
  std::string agentPath;  // libsonde-agent.so
  AgentContract contract; // what the agent receives, over the socket
};

// Why the executable at `path` cannot run sonde's agent (not readable, not
// ELF, not x86-64), or "".
std::string whyNotX86_64(const std::string &path);

class AttachedProcess {
public:
  // Loads the agent into spec.pid and waits until it has attached (its markers
  // patched). nullopt and a message naming the pid when it cannot.
  static std::optional<AttachedProcess> attach(const AttachSpec &spec, std::string *error);

  AttachedProcess(AttachedProcess &&other) noexcept;
  AttachedProcess &operator=(AttachedProcess &&) = delete;
  ~AttachedProcess();

  pid_t pid() const { return pid_; }
  // Readable when the agent's side closes (it detached, or the process ended).
  int statusFd() const { return socket_; }
  // How long the target's stopped thread was held.
  std::chrono::microseconds pause() const { return pause_; }
  // Closes the connection: the agent detaches.
  void detachAgent();
  // Reads what the agent sent; "error: ..." lines go to errFd. At EOF the fd
  // closes (statusFd() becomes -1).
  void takeAgentReports(int errFd);
  bool running() const;

private:
  AttachedProcess() = default;

  pid_t pid_ = -1;
  int socket_ = -1;
  std::chrono::microseconds pause_{0};
  AgentReportLines reports_;
};

} // namespace sonde::session
