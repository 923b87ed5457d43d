#include "runtime/transport/CtfStream.h"

#include <cerrno>
#include <cstring>
#include <unistd.h>

namespace sonde::transport {

namespace {

// Byte offsets of the packet header and context fields (CtfMetadata.cpp's
// declarations; every field is byte-aligned, so there is no padding).
constexpr size_t kMagicAt = 0;
constexpr size_t kUuidAt = 4;
constexpr size_t kStreamIdAt = 20;
constexpr size_t kInstanceIdAt = 24;
constexpr size_t kBeginAt = 32;
constexpr size_t kEndAt = 40;
constexpr size_t kContentSizeAt = 48;
constexpr size_t kPacketSizeAt = 56;
constexpr size_t kDiscardedAt = 64;
constexpr size_t kSequenceAt = 72;
constexpr size_t kEventsAt = 80;
constexpr uint32_t kMagic = 0xC1FC1FC1;
// The event header (id, timestamp) and context (vpid, vtid).
constexpr size_t kEventHeaderSize = sizeof(uint32_t) + sizeof(uint64_t) + 2 * sizeof(int32_t);

size_t stringSize(std::string_view text) {
  size_t nul = text.find('\0');
  return (nul == std::string_view::npos ? text.size() : nul) + 1;
}

template <typename T> void store(std::vector<uint8_t> &packet, size_t at, T value) {
  std::memcpy(packet.data() + at, &value, sizeof value);
}

} // namespace

CtfStream::CtfStream(int fd, std::string path, const CtfUuid &uuid, uint64_t instanceId)
    : fd_(fd), path_(std::move(path)), uuid_(uuid), instanceId_(instanceId), packet_(kPacketSize),
      used_(kEventsAt) {}

CtfStream::~CtfStream() { ::close(fd_); }

void CtfStream::put(const void *data, size_t size) {
  std::memcpy(packet_.data() + used_, data, size);
  used_ += size;
}

bool CtfStream::write(uint64_t timestamp, uint32_t eventId, std::span<const CtfValue> values,
                      std::string *error) {
  if (timestamp < lastTimestamp_) {
    *error = "timestamp " + std::to_string(timestamp) + " is before " +
             std::to_string(lastTimestamp_) + " in stream " + std::to_string(instanceId_);
    return false;
  }
  size_t size = kEventHeaderSize;
  for (const CtfValue &value : values)
    size += value.kind == CtfFieldKind::String ? stringSize(value.text) : sizeof(int64_t);
  if (used_ + size > packet_.size()) {
    if (events_ > 0 && !flush(error))
      return false;
    if (kEventsAt + size > packet_.size())
      packet_.resize((kEventsAt + size + kPacketSize - 1) / kPacketSize * kPacketSize);
  }
  if (events_ == 0)
    firstTimestamp_ = timestamp;
  lastTimestamp_ = timestamp;
  ++events_;
  put(&eventId, sizeof eventId);
  put(&timestamp, sizeof timestamp);
  put(&pid_, sizeof pid_);
  put(&tid_, sizeof tid_);
  for (const CtfValue &value : values) {
    if (value.kind == CtfFieldKind::String) {
      size_t length = stringSize(value.text) - 1;
      put(value.text.data(), length);
      packet_[used_++] = 0;
    } else {
      put(&value.number, sizeof value.number);
    }
  }
  return true;
}

bool CtfStream::finish(std::string *error) {
  if (events_ == 0 && discarded_ == discardedReported_)
    return true;
  return flush(error);
}

bool CtfStream::flush(std::string *error) {
  // babeltrace2 cannot count a loss reported by a stream's first packet (it has no
  // earlier total to subtract), so such a stream opens with an empty packet.
  bool written = true;
  if (sequence_ == 0 && discarded_ > 0) {
    uint64_t at = events_ > 0 ? firstTimestamp_ : lastTimestamp_;
    std::vector<uint8_t> baseline(kEventsAt);
    fillHeader(baseline, kEventsAt, at, at, 0);
    written = writeOut(baseline, error);
  }
  if (written) {
    // An empty packet (a loss report alone) spans no time: it sits at the last event.
    fillHeader(packet_, used_, events_ > 0 ? firstTimestamp_ : lastTimestamp_, lastTimestamp_,
               discarded_);
    std::memset(packet_.data() + used_, 0, packet_.size() - used_);
    written = writeOut(packet_, error);
  }
  if (written)
    discardedReported_ = discarded_;
  else
    eventsNotWritten_ += events_; // the packet is dropped: later ones may still fit
  events_ = 0;
  used_ = kEventsAt;
  packet_.resize(kPacketSize);
  return written;
}

void CtfStream::fillHeader(std::vector<uint8_t> &packet, size_t content, uint64_t begin,
                           uint64_t end, uint64_t discarded) {
  store(packet, kMagicAt, kMagic);
  std::memcpy(packet.data() + kUuidAt, uuid_.data(), uuid_.size());
  store(packet, kStreamIdAt, uint32_t{0});
  store(packet, kInstanceIdAt, instanceId_);
  store(packet, kBeginAt, begin);
  store(packet, kEndAt, end);
  store(packet, kContentSizeAt, uint64_t{content * 8});
  store(packet, kPacketSizeAt, uint64_t{packet.size() * 8});
  store(packet, kDiscardedAt, discarded);
  store(packet, kSequenceAt, sequence_);
}

bool CtfStream::writeOut(const std::vector<uint8_t> &packet, std::string *error) {
  for (size_t done = 0; done < packet.size();) {
    ssize_t n = ::write(fd_, packet.data() + done, packet.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      *error = "cannot write '" + path_ + "': " + std::strerror(n < 0 ? errno : EIO);
      // Half a packet would make readers reject the whole stream.
      if (done > 0 && ::ftruncate(fd_, static_cast<off_t>(fileBytes_)) == 0)
        ::lseek(fd_, static_cast<off_t>(fileBytes_), SEEK_SET);
      return false;
    }
    done += static_cast<size_t>(n);
  }
  fileBytes_ += packet.size();
  ++sequence_;
  return true;
}

} // namespace sonde::transport
