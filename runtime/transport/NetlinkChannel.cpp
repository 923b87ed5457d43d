#include "runtime/transport/NetlinkChannel.h"

#include "runtime/transport/NetlinkFormat.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cstring>
#include <sys/socket.h>
#include <unistd.h>

namespace sonde::transport {

namespace {

bool fail(std::string *error, const std::string &what) {
  if (error)
    *error = what;
  return false;
}

bool failErrno(std::string *error, const char *what) {
  return fail(error, std::string(what) + ": " + std::strerror(errno));
}

bool checkConfig(const NetlinkConfig &config, std::string *error) {
  if (config.mode == RelayMode::Overwrite)
    return fail(error, "the netlink transport has no overwrite mode (a socket queue cannot drop "
                       "its oldest messages); use block or discard, or the relay transport");
  if (config.mode != RelayMode::Block && config.mode != RelayMode::Discard)
    return fail(error, "unknown netlink transport mode");
  if (config.messageBytes == 0 || config.messageBytes > kNetlinkMaxMessageBytes)
    return fail(error, "netlink message size must be between 1 and " +
                           std::to_string(kNetlinkMaxMessageBytes) + " bytes");
  return true;
}

// The sender's buffer must hold the largest message (netlink refuses a message
// larger than sk_sndbuf - 32 with EMSGSIZE): one record may exceed the batch.
bool sizeSendBuffer(int fd, std::string *error) {
  int bytes = int(kNetlinkHeadersSize + kNetlinkMaxMessageBytes + 4096);
  if (setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof bytes) != 0)
    return failErrno(error, "netlink SO_SNDBUF");
  return true;
}

bool setSendTimeout(int fd, uint64_t timeoutNs, std::string *error) {
  // A zero timeval means "wait forever": keep at least 1 us.
  timeval tv{time_t(timeoutNs / 1'000'000'000), suseconds_t(timeoutNs % 1'000'000'000 / 1000)};
  if (tv.tv_sec == 0 && tv.tv_usec == 0)
    tv.tv_usec = 1;
  if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) != 0)
    return failErrno(error, "netlink SO_SNDTIMEO");
  return true;
}

bool sizeReceiveBuffer(int fd, uint64_t bufferBytes, std::string *error) {
  int bytes = int(std::min<uint64_t>(bufferBytes, INT_MAX / 2));
  // SO_RCVBUFFORCE (root) passes net.core.rmem_max; SO_RCVBUF is capped by it.
  if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof bytes) == 0 ||
      setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes) == 0)
    return true;
  return failErrno(error, "netlink SO_RCVBUF");
}

} // namespace

std::string NetlinkConfig::encode() const {
  return std::string(mode == RelayMode::Discard ? "discard" : "block") + ":" +
         std::to_string(messageBytes) + ":" + std::to_string(blockTimeoutNs);
}

std::optional<NetlinkConfig> NetlinkConfig::decode(std::string_view text, std::string *error) {
  NetlinkConfig config;
  size_t colon = text.find(':');
  size_t colon2 = colon == std::string_view::npos ? colon : text.find(':', colon + 1);
  if (colon2 == std::string_view::npos) {
    fail(error, "bad netlink transport description '" + std::string(text) + "'");
    return std::nullopt;
  }
  std::string_view mode = text.substr(0, colon);
  std::string_view bytes = text.substr(colon + 1, colon2 - colon - 1);
  std::string_view timeout = text.substr(colon2 + 1);
  auto number = [](std::string_view s, auto &out) {
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && end == s.data() + s.size() && !s.empty();
  };
  if (mode == "block")
    config.mode = RelayMode::Block;
  else if (mode == "discard")
    config.mode = RelayMode::Discard;
  else if (mode == "overwrite")
    config.mode = RelayMode::Overwrite; // refused below, with the reason
  else {
    fail(error, "unknown netlink transport mode '" + std::string(mode) + "'");
    return std::nullopt;
  }
  if (!number(bytes, config.messageBytes) || !number(timeout, config.blockTimeoutNs)) {
    fail(error, "bad netlink transport description '" + std::string(text) + "'");
    return std::nullopt;
  }
  if (!checkConfig(config, error))
    return std::nullopt;
  return config;
}

NetlinkChannel::NetlinkChannel(const NetlinkConfig &config, int sendFd, bool ownsSendFd)
    : config_(config), sendFd_(sendFd), ownsSendFd_(ownsSendFd),
      shared_(std::make_unique<Shared>()) {}

NetlinkChannel::NetlinkChannel(NetlinkChannel &&other) noexcept
    : config_(other.config_), sendFd_(other.sendFd_), receiveFd_(other.receiveFd_),
      ownsSendFd_(other.ownsSendFd_), port_(other.port_), shared_(std::move(other.shared_)) {
  other.sendFd_ = other.receiveFd_ = -1;
  other.ownsSendFd_ = false;
}

NetlinkChannel &NetlinkChannel::operator=(NetlinkChannel &&other) noexcept {
  if (this != &other) {
    closeAll();
    config_ = other.config_;
    sendFd_ = other.sendFd_;
    receiveFd_ = other.receiveFd_;
    ownsSendFd_ = other.ownsSendFd_;
    port_ = other.port_;
    shared_ = std::move(other.shared_);
    other.sendFd_ = other.receiveFd_ = -1;
    other.ownsSendFd_ = false;
  }
  return *this;
}

NetlinkChannel::~NetlinkChannel() { closeAll(); }

void NetlinkChannel::closeAll() {
  closeReceiver();
  if (ownsSendFd_ && sendFd_ >= 0)
    close(sendFd_);
  sendFd_ = -1;
}

void NetlinkChannel::closeReceiver() {
  if (receiveFd_ >= 0)
    close(receiveFd_);
  receiveFd_ = -1;
}

std::optional<NetlinkChannel> NetlinkChannel::create(const NetlinkConfig &config,
                                                     std::string *error) {
  if (!checkConfig(config, error))
    return std::nullopt;
  int receiveFd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_USERSOCK);
  if (receiveFd < 0) {
    failErrno(error, "netlink socket");
    return std::nullopt;
  }
  // Owned from here: the channel closes both sockets on every failure path.
  NetlinkChannel channel(config, -1, true);
  channel.receiveFd_ = receiveFd;
  // Port 0: the kernel picks a free port id (the pid when it is free).
  sockaddr_nl self{};
  self.nl_family = AF_NETLINK;
  socklen_t len = sizeof self;
  if (bind(receiveFd, reinterpret_cast<sockaddr *>(&self), sizeof self) != 0 ||
      getsockname(receiveFd, reinterpret_cast<sockaddr *>(&self), &len) != 0) {
    failErrno(error, "netlink bind");
    return std::nullopt;
  }
  channel.port_ = self.nl_pid;
  if (!sizeReceiveBuffer(receiveFd, config.bufferBytes, error))
    return std::nullopt;
  channel.sendFd_ = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_USERSOCK);
  if (channel.sendFd_ < 0) {
    failErrno(error, "netlink socket");
    return std::nullopt;
  }
  sockaddr_nl peer{};
  peer.nl_family = AF_NETLINK;
  peer.nl_pid = channel.port_;
  if (connect(channel.sendFd_, reinterpret_cast<sockaddr *>(&peer), sizeof peer) != 0) {
    failErrno(error, "netlink connect");
    return std::nullopt;
  }
  if (!sizeSendBuffer(channel.sendFd_, error) ||
      !setSendTimeout(channel.sendFd_, config.blockTimeoutNs, error))
    return std::nullopt;
  return channel;
}

std::optional<NetlinkChannel> NetlinkChannel::attach(int fd, const NetlinkConfig &config,
                                                     std::string *error) {
  if (!checkConfig(config, error))
    return std::nullopt;
  int domain = 0, protocol = 0;
  socklen_t len = sizeof domain;
  if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0 ||
      getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &protocol, &len) != 0 || domain != AF_NETLINK ||
      protocol != NETLINK_USERSOCK) {
    fail(error, "fd " + std::to_string(fd) + " is not a NETLINK_USERSOCK socket");
    return std::nullopt;
  }
  sockaddr_nl peer{};
  len = sizeof peer;
  if (getpeername(fd, reinterpret_cast<sockaddr *>(&peer), &len) != 0 || peer.nl_pid == 0) {
    fail(error, "netlink fd " + std::to_string(fd) + " is not connected to a consumer");
    return std::nullopt;
  }
  NetlinkChannel channel(config, fd, false);
  channel.port_ = peer.nl_pid;
  return channel;
}

} // namespace sonde::transport
