// How sonde -x makes a running process load the agent: one of its threads,
// stopped at a safe point (SafePoint.h), maps a page of sonde's code
// (InjectionCode.h), which calls dlopen, dlsym and sonde_agent_attach and then
// returns the thread to where it was through a resume frame on its stack
// (ResumeFrame.h). From the moment the thread's registers are first changed,
// every path (sonde alive, killed, timed out) ends with the thread resumed as
// it was, by itself; sonde only watches and reads the results.
#pragma once

#include <chrono>
#include <string>
#include <sys/types.h>

namespace sonde::session {

struct InjectionRequest {
  pid_t pid = 0;
  std::string agentPath;  // libsonde-agent.so
  std::string socketName; // sonde_agent_attach's first argument
  pid_t consumer = 0;     // its second: the pid the agent's socket peer must have
};

// Runs the load in request.pid; true once sonde_agent_attach has started the
// agent's thread (which then connects to the socket). `pause` is how long the
// borrowed thread was held.
bool injectAgent(const InjectionRequest &request, std::chrono::microseconds *pause,
                 std::string *error);

} // namespace sonde::session
