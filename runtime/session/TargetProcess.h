// The -c CMD target: started by sonde with the agent preloaded (runtime/agent),
// held before exec until the begin probes have run (so target() works there),
// then watched until it exits. The pipes follow the agent's environment contract
// (runtime/agent/README.md): a control pipe whose EOF detaches every agent, and a
// status pipe on which each agent reports "ready" or "error: ...".
#pragma once

#include "runtime/session/AgentHandshake.h"
#include "runtime/session/AgentReportLines.h"

#include <optional>
#include <set>
#include <string>
#include <sys/types.h>

namespace sonde::session {

struct TargetSpec {
  std::string command;         // split like a shell word list (wordexp, no substitution)
  std::string agentPath;       // libsonde-agent.so; "" when no probe runs in the target
  AgentContract contract;      // what the agent receives, through the environment
  bool stdoutToStderr = false; // the command's standard output is sonde's standard error
  std::string probed;          // SONDE_AGENT_PROBED (ProbedFiles.h): where agents attach
};

class TargetProcess {
public:
  // Forks the target, which waits for release() before it execs. nullopt and a
  // message naming the command when it cannot be started.
  static std::optional<TargetProcess> spawn(const TargetSpec &spec, std::string *error);

  TargetProcess(TargetProcess &&other) noexcept;
  TargetProcess &operator=(TargetProcess &&) = delete;
  ~TargetProcess();

  pid_t pid() const { return pid_; }
  // Readable once the target has exited (a pidfd).
  int exitFd() const { return pidFd_; }
  // Readable when an agent reports (see takeAgentReports).
  int statusFd() const { return statusFd_; }

  // Lets the held target exec its command.
  void release();
  bool released() const { return released_; }
  // Kills a target that never ran (begin probes failed) and reaps it.
  void abandon();
  // Closes the control pipe: every agent of the session detaches.
  void detachAgents();
  // Agent reports received so far: "error: ..." lines are written to `err` as
  // "sonde: agent in pid N: ...", "warning: ..." as "sonde: WARNING: ...";
  // returns true once some agent said "ready".
  bool takeAgentReports(int errFd);
  bool agentReady() const { return ready_; }
  // Some process of the command loaded the agent (attached or only following execs).
  bool agentLoaded() const { return loaded_; }
  // The probed files (ProbedFiles.h ids) agents reported running or loading.
  const std::set<std::string> &probedSeen() const { return probedSeen_; }
  // The wait status once the target has exited (reaps it; non-blocking).
  std::optional<int> exitStatus();

private:
  TargetProcess() = default;

  pid_t pid_ = -1;
  int pidFd_ = -1, statusFd_ = -1, controlFd_ = -1, goFd_ = -1;
  bool ready_ = false, loaded_ = false, released_ = false;
  std::set<std::string> probedSeen_;
  std::optional<int> status_;
  AgentReportLines reports_; // the status pipe's lines
};

// "exited with status 3", "was killed by signal 11 (Segmentation fault)".
std::string describeWaitStatus(int status);

} // namespace sonde::session
