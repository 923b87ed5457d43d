#include "runtime/transport/NetlinkProducer.h"

#include "runtime/transport/SharedFutex.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace sonde::transport {

NetlinkProducer::NetlinkProducer(const NetlinkChannel &channel) : channel_(channel) {
  startStream();
}

void NetlinkProducer::startStream() {
  pid_ = uint32_t(getpid());
  tid_ = uint32_t(syscall(SYS_gettid));
  generation_ = channel_.nextGeneration();
  seq_ = 0;
  unreported_ = 0;
  counters_ = {};
}

void NetlinkProducer::openBatch() {
  cursor_ = buffer_.get() + kNetlinkHeadersSize;
  room_ = channel_.config().messageBytes;
  batchRecords_ = 0;
}

char *NetlinkProducer::reserveSlow(uint32_t bytes) {
  if (!buffer_) {
    buffer_ = std::make_unique<char[]>(kNetlinkHeadersSize + kNetlinkMaxMessageBytes);
    openBatch();
  }
  if (bytes > kNetlinkMaxMessageBytes) {
    lose(1);
    return nullptr;
  }
  if (bytes > room_ && batchRecords_ > 0)
    send(false);
  // A record larger than a batch opens its own message.
  room_ = std::max(room_, bytes);
  pending_ = bytes;
  return cursor_;
}

void NetlinkProducer::flush() {
  if (buffer_ && (batchRecords_ > 0 || unreported_ > 0))
    send(false);
}

void NetlinkProducer::detach() {
  if (buffer_ && (batchRecords_ > 0 || unreported_ > 0))
    send(true);
}

void NetlinkProducer::forgetAfterFork() {
  if (buffer_)
    openBatch();
  startStream();
}

void NetlinkProducer::send(bool final) {
  const NetlinkConfig &config = channel_.config();
  uint32_t used = uint32_t(cursor_ - (buffer_.get() + kNetlinkHeadersSize));
  uint32_t length = kNetlinkHeadersSize + used;
  nlmsghdr nl{length, kNetlinkMessageType, 0, uint32_t(seq_), 0};
  NetlinkBatchHeader header{kNetlinkMagic,
                            kNetlinkVersion,
                            sizeof(NetlinkBatchHeader),
                            pid_,
                            tid_,
                            generation_,
                            batchRecords_,
                            seq_,
                            unreported_};
  std::memcpy(buffer_.get(), &nl, sizeof nl);
  std::memcpy(buffer_.get() + sizeof nl, &header, sizeof header);

  std::atomic<bool> &stalled = channel_.consumerStalled();
  bool wait =
      (final || config.mode == RelayMode::Block) && !stalled.load(std::memory_order_relaxed);
  // The socket's SO_SNDTIMEO bounds one wait; a signal restarts it, so keep
  // a deadline across retries.
  uint64_t deadline = wait ? monotonicNs() + config.blockTimeoutNs : 0;
  ssize_t sent;
  for (;;) {
    sent = ::send(channel_.fd(), buffer_.get(), length, MSG_NOSIGNAL | (wait ? 0 : MSG_DONTWAIT));
    if (sent >= 0 || errno != EINTR || (wait && monotonicNs() >= deadline))
      break;
  }
  int sendErrno = errno;
  uint32_t records = batchRecords_;
  openBatch();
  if (sent == ssize_t(length)) {
    counters_.recordsWritten += records;
    counters_.bytesWritten += used;
    ++counters_.messages;
    ++seq_;
    unreported_ = 0;
    if (stalled.load(std::memory_order_relaxed))
      stalled.store(false, std::memory_order_relaxed);
    return;
  }
  lose(records);
  // A timed-out wait, or no consumer at all: do not wait again until a send succeeds.
  if (wait || sendErrno == ECONNREFUSED)
    stalled.store(true, std::memory_order_relaxed);
}

void NetlinkProducer::lose(uint64_t records) {
  counters_.recordsLost += records;
  unreported_ += records;
  if (std::atomic<uint64_t> *shared = channel_.lossCounter())
    shared->fetch_add(records, std::memory_order_relaxed);
}

} // namespace sonde::transport
