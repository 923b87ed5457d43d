#include "runtime/transport/NetlinkConsumer.h"

#include "runtime/transport/NetlinkFormat.h"

#include <cerrno>
#include <cstring>
#include <poll.h>
#include <sys/socket.h>

namespace sonde::transport {

NetlinkConsumer::NetlinkConsumer(const NetlinkChannel &channel)
    : channel_(channel), buffer_(kNetlinkHeadersSize + kNetlinkMaxMessageBytes) {}

size_t NetlinkConsumer::poll(const Sink &sink) {
  size_t calls = 0;
  int fd = channel_.receiveFd();
  if (fd < 0)
    return 0;
  for (;;) {
    // MSG_TRUNC: the result is the message's real length, even when longer.
    ssize_t n = recv(fd, buffer_.data(), buffer_.size(), MSG_DONTWAIT | MSG_TRUNC);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      if (errno == ENOBUFS) { // reported once per overrun; the queue goes on
        ++totals_.overruns;
        continue;
      }
      return calls; // EAGAIN: the queue is empty
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
  if (length < kNetlinkHeadersSize || length > buffer_.size())
    return false;
  nlmsghdr nl;
  NetlinkBatchHeader h;
  std::memcpy(&nl, buffer_.data(), sizeof nl);
  std::memcpy(&h, buffer_.data() + sizeof nl, sizeof h);
  uint32_t size = length - kNetlinkHeadersSize;
  if (nl.nlmsg_len != length || nl.nlmsg_type != kNetlinkMessageType || h.magic != kNetlinkMagic ||
      h.version != kNetlinkVersion || h.headerSize != sizeof h || h.records > size ||
      (h.records == 0) != (size == 0))
    return false;
  NetlinkStreamId id{h.pid, h.tid, h.generation};
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
