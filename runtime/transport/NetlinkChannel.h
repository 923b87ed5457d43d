// A netlink channel: records travel as messages on an AF_NETLINK socket
// (protocol NETLINK_USERSOCK, unicast between user processes), and the
// receiving socket's buffer is the queue. sonde creates the channel: a receiving
// socket bound to its own port, and a sending socket connected to that port,
// whose fd the traced processes inherit and attach to. Every producer thread of
// every target sends on that one socket (a datagram send is atomic).
#pragma once

#include "runtime/transport/RelayFormat.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace sonde::transport {

struct NetlinkConfig {
  RelayMode mode = RelayMode::Block; // Block or Discard; Overwrite is refused
  // The receive queue (SO_RCVBUFFORCE as root, else SO_RCVBUF capped by
  // net.core.rmem_max). The kernel doubles it for overhead and charges each
  // message its skb truesize (payload plus some hundreds of bytes).
  uint64_t bufferBytes = 4 << 20;
  // Record bytes batched in one message (1: one record a message); a larger
  // record goes alone, up to kNetlinkMaxMessageBytes.
  uint32_t messageBytes = 4096;
  uint64_t blockTimeoutNs = 1'000'000'000;

  // What a target needs (mode, messageBytes, blockTimeoutNs) as text for its
  // environment, e.g. "block:4096:1000000000", and back.
  std::string encode() const;
  static std::optional<NetlinkConfig> decode(std::string_view text, std::string *error);
};

class NetlinkChannel {
public:
  static std::optional<NetlinkChannel> create(const NetlinkConfig &config, std::string *error);
  // Sends on an inherited sending socket (the fd stays owned by the caller).
  // `config` must be the creator's (NetlinkConfig::encode/decode carry it); the
  // bound on one wait is the socket's SO_SNDTIMEO, which create() set.
  static std::optional<NetlinkChannel> attach(int fd, const NetlinkConfig &config,
                                              std::string *error);

  NetlinkChannel(NetlinkChannel &&other) noexcept;
  NetlinkChannel &operator=(NetlinkChannel &&other) noexcept;
  ~NetlinkChannel();

  // The sending socket: what targets inherit (close-on-exec; dup it to pass it on).
  int fd() const { return sendFd_; }
  // The receiving socket (create only; -1 after attach or closeReceiver()).
  int receiveFd() const { return receiveFd_; }
  // The consumer's netlink port id (the receiving socket's).
  uint32_t port() const { return port_; }
  const NetlinkConfig &config() const { return config_; }
  // The consumer is gone: senders get ECONNREFUSED from now on.
  void closeReceiver();

  // Process-local state the producers of this process share.
  // Set by a block-mode producer whose send timed out or was refused (the
  // consumer looks dead): producers then send without waiting until one succeeds.
  std::atomic<bool> &consumerStalled() const { return shared_->consumerStalled; }
  // A fresh producer generation (stream ids stay unique when a tid is reused).
  uint32_t nextGeneration() const { return shared_->generation.fetch_add(1) + 1; }
  // Where this process's producers also count every record they lose: a
  // counter in memory sonde maps (the script segment's), so that losses no
  // message could report (the consumer stalled until the process exited)
  // are counted all the same. Set before producers start; null: none.
  void countLossesIn(std::atomic<uint64_t> *counter) const { shared_->lossCounter = counter; }
  std::atomic<uint64_t> *lossCounter() const { return shared_->lossCounter; }

private:
  struct Shared {
    std::atomic<bool> consumerStalled{false};
    std::atomic<uint32_t> generation{0};
    std::atomic<uint64_t> *lossCounter = nullptr;
  };

  NetlinkChannel(const NetlinkConfig &config, int sendFd, bool ownsSendFd);
  void closeAll();

  NetlinkConfig config_;
  int sendFd_ = -1;
  int receiveFd_ = -1;
  bool ownsSendFd_ = false;
  uint32_t port_ = 0;
  std::unique_ptr<Shared> shared_;
};

} // namespace sonde::transport
