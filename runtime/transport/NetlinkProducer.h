// One thread's writer into a netlink channel, with RelayProducer's interface.
// Records collect in a thread-local batch (reserve + commit are inline: no lock,
// allocation or syscall) of up to the channel's messageBytes; a full batch goes
// out as one message. A record larger than that goes alone in its own message
// (up to kNetlinkMaxMessageBytes), so messageBytes = 1 sends one record per
// message, the classic netlink design. Block mode waits
// for queue room at most the channel's timeout (then the batch is lost, counted,
// and the channel looks stalled: later sends do not wait until one succeeds);
// discard mode never waits (a full queue loses the batch, counted). Each message
// reports the records lost since the previous delivered one, and every loss is
// also added to the channel's shared counter (NetlinkChannel::lossCounter),
// which needs no message: the total is exact even when the losses after the
// last delivered message are never reported. Records never straddle messages.
//
// Not thread-safe: each thread owns its producer and calls detach() before it
// exits. The channel must outlive its producers.
#pragma once

#include "runtime/transport/NetlinkChannel.h"
#include "runtime/transport/NetlinkFormat.h"

#include <cstdint>
#include <memory>

namespace sonde::transport {

struct NetlinkProducerCounters {
  uint64_t recordsWritten = 0; // delivered to the consumer's queue
  uint64_t recordsLost = 0;    // in a batch the queue refused, or larger than a message
  uint64_t bytesWritten = 0;   // record bytes delivered
  uint64_t messages = 0;       // messages delivered
};

class NetlinkProducer {
public:
  explicit NetlinkProducer(const NetlinkChannel &channel);
  NetlinkProducer(const NetlinkProducer &) = delete;
  NetlinkProducer &operator=(const NetlinkProducer &) = delete;
  ~NetlinkProducer() { detach(); }

  // Room for one record of `bytes` (> 0), or null: the record is lost (and counted).
  // After a non-null result, write the record and call commit() before the next
  // reserve().
  char *reserve(uint32_t bytes) {
    if (bytes <= room_) {
      pending_ = bytes;
      return cursor_;
    }
    return reserveSlow(bytes);
  }

  // Commits only the first `bytes` (<= reserved) of the reservation.
  void commit(uint32_t bytes) {
    pending_ = bytes;
    commit();
  }
  void commit() {
    cursor_ += pending_;
    room_ -= pending_;
    ++batchRecords_;
  }

  // After reserve(): whether the record opens its message.
  bool atBufferStart() const { return batchRecords_ == 0; }

  // Sends the batch now (and reports unreported losses), waiting as the mode says.
  void flush();
  // Sends what is left, and losses not yet reported, in a final (possibly empty)
  // message, waiting at most the timeout in either mode (thread exit).
  void detach();
  // In a fork() child: the batch and the stream are the parent thread's. Drop the
  // batch unsent and start a new stream (new pid, tid, generation; counters zero).
  void forgetAfterFork();

  const NetlinkProducerCounters &counters() const { return counters_; }

private:
  char *reserveSlow(uint32_t bytes);
  void startStream();
  void openBatch();
  // Sends the batch (possibly empty): waits up to the timeout in block mode, or
  // when `final` in either mode, unless the channel looks stalled.
  void send(bool final);
  void lose(uint64_t records);

  const NetlinkChannel &channel_;
  std::unique_ptr<char[]> buffer_; // headers, then up to kNetlinkMaxMessageBytes of records
  char *cursor_ = nullptr;         // where the next record goes
  uint32_t room_ = 0;              // record bytes the batch still takes
  uint32_t pending_ = 0;           // size of the reserved record
  uint32_t batchRecords_ = 0;
  uint32_t pid_ = 0, tid_ = 0, generation_ = 0;
  uint64_t seq_ = 0;        // messages delivered on this stream
  uint64_t unreported_ = 0; // records lost since the last delivered message
  NetlinkProducerCounters counters_;
};

} // namespace sonde::transport
