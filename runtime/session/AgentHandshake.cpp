#include "runtime/session/AgentHandshake.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

namespace sonde::session {

namespace {

// Module paths and configs are short; a larger message is not one of ours.
constexpr size_t kMaxText = 8192;
constexpr size_t kMaxFds = 6;

// The descriptors in the order the message lists them.
std::vector<int *> fdSlots(AgentContract &c) {
  std::vector<int *> slots = {&c.segmentFd, &c.outputFd, &c.errorFd};
  if (c.relayFd >= 0)
    slots.push_back(&c.relayFd);
  if (c.netlinkFd >= 0)
    slots.push_back(&c.netlinkFd);
  if (c.moduleFd >= 0)
    slots.push_back(&c.moduleFd);
  return slots;
}

// One data buffer and a control buffer for SCM_RIGHTS.
msghdr messageOf(iovec *data, char *control, size_t controlSize) {
  msghdr msg{};
  msg.msg_iov = data;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = controlSize;
  return msg;
}

} // namespace

std::string encodeContractText(const AgentContract &c) {
  std::string text = "module=" + c.module + "\nconsumer=" + std::to_string(c.consumerPid) + "\n";
  if (c.relayFd >= 0)
    text += "relay=1\n";
  if (c.netlinkFd >= 0)
    text += "netlink=" + c.netlinkConfig + "\n";
  if (c.moduleFd >= 0)
    text += "module-fd=1\n";
  return text;
}

std::optional<AgentContract> decodeContractText(const std::string &text, std::string *error) {
  AgentContract c;
  bool haveModule = false;
  for (size_t start = 0; start < text.size();) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) {
      *error = "the contract's last line is not terminated";
      return std::nullopt;
    }
    std::string line = text.substr(start, end - start);
    start = end + 1;
    size_t eq = line.find('=');
    std::string key = line.substr(0, eq),
                value = eq == std::string::npos ? "" : line.substr(eq + 1);
    if (eq == std::string::npos) {
      *error = "malformed contract line '" + line + "'";
      return std::nullopt;
    }
    if (key == "module") {
      c.module = value;
      haveModule = !value.empty();
    } else if (key == "consumer") {
      char *endp = nullptr;
      c.consumerPid = std::strtoll(value.c_str(), &endp, 10);
      if (value.empty() || *endp) {
        *error = "malformed consumer pid '" + value + "'";
        return std::nullopt;
      }
    } else if (key == "relay") {
      c.relayFd = 0; // a descriptor follows
    } else if (key == "netlink") {
      c.netlinkFd = 0;
      c.netlinkConfig = value;
    } else if (key == "module-fd") {
      c.moduleFd = 0; // a descriptor follows
    } else {
      *error = "unknown contract key '" + key + "'";
      return std::nullopt;
    }
  }
  if (!haveModule) {
    *error = "the contract names no module";
    return std::nullopt;
  }
  if (c.relayFd >= 0 && c.netlinkFd >= 0) {
    *error = "the contract names two transports";
    return std::nullopt;
  }
  return c;
}

bool sendAgentContract(int socket, const AgentContract &contract, std::string *error) {
  std::string text = encodeContractText(contract);
  AgentContract copy = contract;
  std::vector<int *> slots = fdSlots(copy);
  std::vector<int> fds;
  for (int *slot : slots)
    fds.push_back(*slot);
  char control[CMSG_SPACE(sizeof(int) * kMaxFds)] = {};
  iovec iov{text.data(), text.size()};
  msghdr msg = messageOf(&iov, control, CMSG_SPACE(sizeof(int) * fds.size()));
  cmsghdr *cmsg = CMSG_FIRSTHDR(&msg);
  cmsg->cmsg_level = SOL_SOCKET;
  cmsg->cmsg_type = SCM_RIGHTS;
  cmsg->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
  std::memcpy(CMSG_DATA(cmsg), fds.data(), sizeof(int) * fds.size());
  ssize_t n;
  do
    n = sendmsg(socket, &msg, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(text.size())) {
    *error = std::string("cannot send the agent its contract: ") +
             (n < 0 ? std::strerror(errno) : "short write");
    return false;
  }
  return true;
}

std::optional<AgentContract> receiveAgentContract(int socket, std::string *error) {
  std::vector<char> text(kMaxText);
  char control[CMSG_SPACE(sizeof(int) * kMaxFds)] = {};
  iovec iov{text.data(), text.size()};
  msghdr msg = messageOf(&iov, control, sizeof control);
  ssize_t n;
  do
    n = recvmsg(socket, &msg, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  std::vector<int> fds;
  for (cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
      size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      const unsigned char *data = CMSG_DATA(c);
      for (size_t i = 0; i < count; ++i) {
        int fd;
        std::memcpy(&fd, data + i * sizeof(int), sizeof fd);
        fds.push_back(fd);
      }
    }
  auto fail = [&](const std::string &why) -> std::optional<AgentContract> {
    for (int fd : fds)
      close(fd);
    *error = why;
    return std::nullopt;
  };
  if (n <= 0)
    return fail(n == 0 ? "sonde closed the connection before sending the contract"
                       : std::string("cannot receive the contract: ") + std::strerror(errno));
  if (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC))
    return fail("the contract message is too large");
  std::optional<AgentContract> c =
      decodeContractText(std::string(text.data(), static_cast<size_t>(n)), error);
  if (!c)
    return fail(*error);
  std::vector<int *> slots = fdSlots(*c);
  if (slots.size() != fds.size())
    return fail("the contract carries " + std::to_string(fds.size()) + " descriptors, not " +
                std::to_string(slots.size()));
  for (size_t i = 0; i < slots.size(); ++i)
    *slots[i] = fds[i];
  return c;
}

} // namespace sonde::session
