// What sonde hands an agent it attaches to a running process (-x): the same
// contract the -c path passes through the environment (runtime/agent/README.md),
// sent over a connected unix socket, the descriptors as SCM_RIGHTS. The socket
// then carries the agent's "ready"/"error: ..." report, and its EOF detaches.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace sonde::session {

struct AgentContract {
  std::string module; // the compiled handler module
  int64_t consumerPid = 0;
  int segmentFd = -1, outputFd = -1, errorFd = -1;
  int relayFd = -1;   // --transport=relay: the channel's memfd
  int netlinkFd = -1; // --transport=netlink: the channel's sending socket
  std::string netlinkConfig;
  // -x: the module as a sealed memfd, which the agent loads through
  // /proc/self/fd (a process of another user cannot read sonde's build
  // directory, and nobody can change a sealed copy).
  int moduleFd = -1;
};

// Sends `contract` on `socket` (one message); false and `error` on failure.
bool sendAgentContract(int socket, const AgentContract &contract, std::string *error);

// Receives what sendAgentContract sent; the descriptors are new ones in this
// process, close-on-exec. nullopt and `error` on failure or a malformed message.
std::optional<AgentContract> receiveAgentContract(int socket, std::string *error);

// The contract as text (without descriptors), and back; exposed for tests.
std::string encodeContractText(const AgentContract &contract);
std::optional<AgentContract> decodeContractText(const std::string &text, std::string *error);

} // namespace sonde::session
