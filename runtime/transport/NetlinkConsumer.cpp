#include "runtime/transport/NetlinkConsumer.h"

#include "runtime/transport/NetlinkFormat.h"
#include "runtime/values/ProcessIdentity.h"

#include <cerrno>
#include <cstring>
#include <linux/netlink.h>
#include <poll.h>
#include <string>
#include <sys/socket.h>

namespace sonde::transport {

NetlinkConsumer::NetlinkConsumer(const NetlinkChannel &channel)
    : channel_(channel), buffer_(kNetlinkHeadersSize + kNetlinkMaxMessageBytes) {
  sockaddr_nl self{};
  socklen_t len = sizeof self;
  if (getsockname(channel.fd(), reinterpret_cast<sockaddr *>(&self), &len) == 0)
    senderPort_ = self.nl_pid;
}

size_t NetlinkConsumer::poll(const Sink &sink) {
  size_t calls = 0;
  int fd = channel_.receiveFd();
  if (fd < 0)
    return 0;
  for (;;) {
    // MSG_TRUNC: the result is the message's real length, even when longer.
    sockaddr_nl from{};
    socklen_t fromLength = sizeof from;
    ssize_t n = recvfrom(fd, buffer_.data(), buffer_.size(), MSG_DONTWAIT | MSG_TRUNC,
                         reinterpret_cast<sockaddr *>(&from), &fromLength);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      if (errno == ENOBUFS) { // reported once per overrun; the queue goes on
        ++totals_.overruns;
        continue;
      }
      return calls; // EAGAIN: the queue is empty
    }
    // Any local process may send to our port: only the sending socket is ours.
    if (senderPort_ != 0 && from.nl_pid != senderPort_) {
      ++totals_.malformed;
      continue;
    }
    NetlinkBatch batch;
    if (!accept(uint32_t(n), &batch)) {
      ++totals_.malformed;
      continue;
    }
    sink(batch);
    ++calls;
  }
}

// Checks the message in buffer_ (of `length` bytes) and accounts for it.
bool NetlinkConsumer::accept(uint32_t length, NetlinkBatch *batch) {
  if (length < kNetlinkHeadersSize || length > buffer_.size()) {
    corruption_.note("a netlink message from the traced processes' socket has " +
                     std::to_string(length) + " bytes, no batch's size");
    return false;
  }
  nlmsghdr nl;
  NetlinkBatchHeader h;
  std::memcpy(&nl, buffer_.data(), sizeof nl);
  std::memcpy(&h, buffer_.data() + sizeof nl, sizeof h);
  uint32_t size = length - kNetlinkHeadersSize;
  if (nl.nlmsg_len != length || nl.nlmsg_type != kNetlinkMessageType || h.magic != kNetlinkMagic ||
      h.version != kNetlinkVersion || h.headerSize != sizeof h || h.records > size ||
      (h.records == 0) != (size == 0)) {
    corruption_.note("a netlink message of " + std::to_string(length) +
                     " bytes from the traced processes' socket has a malformed header");
    return false;
  }
  NetlinkStreamId id{h.pid, h.tid, h.generation};
  // The sender's pid and tid name its stream (and a -b trace's file).
  if (!values::plausiblePid(h.pid) || !values::plausiblePid(h.tid)) {
    corruption_.note("a netlink message names pid " + std::to_string(h.pid) + " tid " +
                     std::to_string(h.tid) + " as its sender, no thread's ids");
    return false;
  }
  if (streams_.size() >= kMaxNetlinkStreams && !streams_.count(id)) {
    corruption_.note("netlink messages name more than " + std::to_string(kMaxNetlinkStreams) +
                     " producer streams (the last pid " + std::to_string(h.pid) + " tid " +
                     std::to_string(h.tid) + ")");
    return false;
  }
  StreamState &stream = streams_[id];
  if (h.seq < stream.nextSeq)
    return false; // a replay: never deliver records twice
  totals_.missingMessages += h.seq - stream.nextSeq;
  stream.nextSeq = h.seq + 1;
  stream.lost += h.lost;
  totals_.recordsDelivered += h.records;
  totals_.recordsLost += h.lost;
  totals_.bytes += size;
  ++totals_.messages;
  *batch = {id, h.seq, h.records, h.lost, buffer_.data() + kNetlinkHeadersSize, size};
  return true;
}

bool NetlinkConsumer::wait(uint64_t timeoutNs) {
  pollfd p{channel_.receiveFd(), POLLIN, 0};
  if (p.fd < 0)
    return false;
  timespec timeout{time_t(timeoutNs / 1'000'000'000), long(timeoutNs % 1'000'000'000)};
  return ppoll(&p, 1, &timeout, nullptr) > 0 && (p.revents & POLLIN);
}

uint64_t NetlinkConsumer::streamLost(const NetlinkStreamId &stream) const {
  auto it = streams_.find(stream);
  return it == streams_.end() ? 0 : it->second.lost;
}

} // namespace sonde::transport
