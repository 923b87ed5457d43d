// NetlinkChannel, NetlinkProducer, NetlinkConsumer: delivery, order and exact loss
// accounting over a NETLINK_USERSOCK socket, across threads and processes.
#include "runtime/transport/NetlinkChannel.h"
#include "runtime/transport/NetlinkConsumer.h"
#include "runtime/transport/NetlinkFormat.h"
#include "runtime/transport/NetlinkProducer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <map>
#include <set>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "TransportTestRecord.h"

using namespace sonde::transport;

namespace {

// Checks each batch's records (TestRecordOrder) and that a batch holds exactly
// its `records`; notes which stream carried each producer's batches.
struct Delivery : TestRecordOrder {
  using TestRecordOrder::TestRecordOrder;

  NetlinkConsumer::Sink sink() {
    return [this](const NetlinkBatch &batch) { take(batch); };
  }

  void take(const NetlinkBatch &batch) {
    uint32_t records = TestRecordOrder::take(batch.data, batch.size, [&](const TestRecord &rec) {
      streams[rec.producer].insert(batch.stream);
    });
    if (records != batch.records)
      ++malformed;
  }

  std::map<uint32_t, std::set<NetlinkStreamId>> streams;
};

NetlinkChannel makeChannel(NetlinkConfig config) {
  std::string error;
  auto channel = NetlinkChannel::create(config, &error);
  EXPECT_TRUE(channel.has_value()) << error;
  return std::move(*channel);
}

// Consumes on its own thread until `done` (set after every producer detached:
// their messages are queued by then), then takes what is left.
void consumeUntil(NetlinkConsumer &consumer, Delivery &delivery, const std::atomic<bool> &done,
                  unsigned pauseUs = 0) {
  auto sink = delivery.sink();
  while (!done.load()) {
    if (pauseUs)
      usleep(pauseUs);
    else
      consumer.wait(10'000'000);
    consumer.poll(sink);
  }
  consumer.poll(sink);
}

// `threads` producers, each writing records 0..records-1 and detaching; returns
// their counters.
std::vector<NetlinkProducerCounters> writeFromThreads(const NetlinkChannel &channel,
                                                      uint32_t threads, uint64_t records) {
  std::vector<std::thread> writers;
  std::vector<NetlinkProducerCounters> counters(threads);
  for (uint32_t t = 0; t < threads; ++t)
    writers.emplace_back([&, t] {
      NetlinkProducer p(channel);
      for (uint64_t i = 0; i < records; ++i)
        writeRecord(p, t, i);
      p.detach();
      counters[t] = p.counters();
    });
  for (auto &w : writers)
    w.join();
  return counters;
}

NetlinkProducerCounters sum(const std::vector<NetlinkProducerCounters> &all) {
  NetlinkProducerCounters total;
  for (const auto &c : all) {
    total.recordsWritten += c.recordsWritten;
    total.recordsLost += c.recordsLost;
    total.bytesWritten += c.bytesWritten;
    total.messages += c.messages;
  }
  return total;
}

// Sends raw bytes to the channel's consumer from a socket of its own.
// Sends raw bytes: on the channel's own sending socket (what a traced process
// inherits), or on a socket of its own connected to the consumer's port (any
// other local process).
class RawSender {
public:
  explicit RawSender(const NetlinkChannel &channel, bool foreign = false)
      : fd_(foreign ? socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_USERSOCK)
                    : dup(channel.fd())) {
    int bytes = 256 * 1024;
    setsockopt(fd_, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof bytes);
    if (!foreign)
      return;
    sockaddr_nl peer{};
    peer.nl_family = AF_NETLINK;
    peer.nl_pid = channel.port();
    EXPECT_EQ(connect(fd_, reinterpret_cast<sockaddr *>(&peer), sizeof peer), 0);
  }
  ~RawSender() { close(fd_); }
  void send(const void *data, size_t size) {
    EXPECT_EQ(::send(fd_, data, size, 0), ssize_t(size)) << std::strerror(errno);
  }
  void send(const std::vector<char> &bytes) { send(bytes.data(), bytes.size()); }

private:
  int fd_;
};

// A well-formed message of `records` TestRecords for producer 0.
std::vector<char> message(uint64_t seq, uint32_t records, uint64_t firstRecord) {
  std::vector<char> bytes(kNetlinkHeadersSize + records * sizeof(TestRecord));
  nlmsghdr nl{uint32_t(bytes.size()), kNetlinkMessageType, 0, 0, 0};
  NetlinkBatchHeader h{kNetlinkMagic, kNetlinkVersion, sizeof h, 77, 78, 1, records, seq, 0};
  std::memcpy(bytes.data(), &nl, sizeof nl);
  std::memcpy(bytes.data() + sizeof nl, &h, sizeof h);
  for (uint32_t i = 0; i < records; ++i) {
    TestRecord rec{0, sizeof(TestRecord), firstRecord + i};
    std::memcpy(bytes.data() + kNetlinkHeadersSize + i * sizeof rec, &rec, sizeof rec);
  }
  return bytes;
}

} // namespace

TEST(TransportNetlink, BlockModeDeliversEveryRecordOnceInOrder) {
  constexpr uint32_t kThreads = 4;
  constexpr uint64_t kRecords = 1'000'000;
  // A 64 KiB queue holds a few dozen 4 KiB messages of the 64 MB sent: producers
  // wait for the consumer most of the time. The long timeout keeps a descheduled
  // consumer from turning waits into loss on a loaded machine.
  NetlinkChannel channel = makeChannel({RelayMode::Block, 64 * 1024, 4096, 60'000'000'000});
  NetlinkConsumer consumer(channel);
  Delivery delivery(kThreads, false);
  std::atomic<bool> done{false};
  std::thread reader([&] { consumeUntil(consumer, delivery, done); });
  NetlinkProducerCounters produced = sum(writeFromThreads(channel, kThreads, kRecords));
  done.store(true);
  reader.join();

  EXPECT_EQ(delivery.malformed, 0u);
  EXPECT_EQ(delivery.disorder, 0u);
  for (uint32_t t = 0; t < kThreads; ++t) {
    EXPECT_EQ(delivery.count[t], kRecords) << "thread " << t;
    EXPECT_EQ(delivery.streams[t].size(), 1u) << "thread " << t;
  }
  const NetlinkTotals &totals = consumer.totals();
  EXPECT_EQ(totals.recordsDelivered, kThreads * kRecords);
  EXPECT_EQ(totals.recordsLost, 0u);
  EXPECT_EQ(totals.malformed, 0u);
  EXPECT_EQ(totals.missingMessages, 0u);
  EXPECT_EQ(totals.bytes, kThreads * kRecords * sizeof(TestRecord));
  EXPECT_EQ(totals.messages, produced.messages);
  EXPECT_EQ(produced.recordsWritten, kThreads * kRecords);
  EXPECT_EQ(produced.recordsLost, 0u);
  EXPECT_EQ(produced.bytesWritten, totals.bytes);
}

TEST(TransportNetlink, DiscardModeAccountsForEveryRecordExactly) {
  constexpr uint32_t kThreads = 2;
  constexpr uint64_t kRecords = 100'000;
  // The smallest queue the kernel allows, 256-byte messages, a slow consumer.
  NetlinkChannel channel = makeChannel({RelayMode::Discard, 1, 256, 10'000'000'000});
  NetlinkConsumer consumer(channel);
  Delivery delivery(kThreads, true);
  std::atomic<bool> done{false};
  std::thread reader([&] { consumeUntil(consumer, delivery, done, 200); });
  NetlinkProducerCounters produced = sum(writeFromThreads(channel, kThreads, kRecords));
  done.store(true);
  reader.join();

  const NetlinkTotals &totals = consumer.totals();
  EXPECT_EQ(delivery.malformed, 0u);
  EXPECT_EQ(delivery.disorder, 0u);
  EXPECT_EQ(totals.malformed, 0u);
  EXPECT_EQ(totals.missingMessages, 0u);
  EXPECT_GT(totals.recordsLost, 0u);
  EXPECT_GT(delivery.delivered, 0u);
  EXPECT_EQ(delivery.delivered, totals.recordsDelivered);
  EXPECT_EQ(delivery.delivered + totals.recordsLost, kThreads * kRecords);
  EXPECT_EQ(produced.recordsWritten, delivery.delivered);
  EXPECT_EQ(produced.recordsLost, totals.recordsLost);
}

TEST(TransportNetlink, ForkedChildDeliversOnItsOwnStreamWithoutRepeatingTheParentsBatch) {
  constexpr uint64_t kParentRecords = 100, kChildRecords = 10'000;
  NetlinkChannel channel = makeChannel({RelayMode::Block, 4 << 20, 4096, 10'000'000'000});
  NetlinkConsumer consumer(channel);
  NetlinkProducer p(channel);
  // Unsent at the fork: only the parent may deliver these.
  for (uint64_t i = 0; i < kParentRecords; ++i)
    ASSERT_TRUE(writeRecord(p, 0, i));
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    p.forgetAfterFork();
    bool ok = true;
    for (uint64_t i = 0; i < kChildRecords; ++i)
      ok = writeRecord(p, 1, i) && ok;
    p.detach();
    ok = ok && p.counters().recordsWritten == kChildRecords;
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  p.detach();

  Delivery delivery(2, false);
  consumer.poll(delivery.sink());
  EXPECT_EQ(delivery.malformed, 0u);
  EXPECT_EQ(delivery.disorder, 0u);
  EXPECT_EQ(delivery.count[0], kParentRecords);
  EXPECT_EQ(delivery.count[1], kChildRecords);
  ASSERT_EQ(delivery.streams[0].size(), 1u);
  ASSERT_EQ(delivery.streams[1].size(), 1u);
  EXPECT_EQ(delivery.streams[0].begin()->pid, uint32_t(getpid()));
  EXPECT_EQ(delivery.streams[1].begin()->pid, uint32_t(child));
  EXPECT_EQ(consumer.totals().recordsLost, 0u);
  EXPECT_EQ(consumer.totals().missingMessages, 0u);
}

TEST(TransportNetlink, MalformedMessagesAreCountedAndSkipped) {
  NetlinkChannel channel = makeChannel({RelayMode::Block, 4 << 20, 4096, 1'000'000'000});
  NetlinkConsumer consumer(channel);
  RawSender raw(channel);
  raw.send("x", 1);
  raw.send(std::vector<char>(100, '\xff'));
  std::vector<char> badMagic = message(0, 1, 0);
  badMagic[sizeof(nlmsghdr)] ^= 1;
  raw.send(badMagic);
  std::vector<char> badLength = message(0, 1, 0);
  badLength.pop_back();
  raw.send(badLength);
  std::vector<char> tooManyRecords = message(0, 0, 0);
  tooManyRecords.resize(kNetlinkHeadersSize + 4);
  reinterpret_cast<nlmsghdr *>(tooManyRecords.data())->nlmsg_len = uint32_t(tooManyRecords.size());
  NetlinkBatchHeader h;
  std::memcpy(&h, tooManyRecords.data() + sizeof(nlmsghdr), sizeof h);
  h.records = 5;
  std::memcpy(tooManyRecords.data() + sizeof(nlmsghdr), &h, sizeof h);
  raw.send(tooManyRecords);
  raw.send(std::vector<char>(kNetlinkHeadersSize + kNetlinkMaxMessageBytes + 100, 0));
  // Valid, then a replay of it, then one after a gap of 4 messages.
  raw.send(message(0, 2, 0));
  raw.send(message(0, 2, 0));
  raw.send(message(5, 1, 2));
  NetlinkProducer p(channel);
  ASSERT_TRUE(writeRecord(p, 1, 0));
  p.detach();

  Delivery delivery(2, true);
  consumer.poll(delivery.sink());
  const NetlinkTotals &totals = consumer.totals();
  EXPECT_EQ(totals.malformed, 7u);
  EXPECT_EQ(totals.missingMessages, 4u);
  EXPECT_EQ(totals.messages, 3u);
  EXPECT_EQ(delivery.count[0], 3u);
  EXPECT_EQ(delivery.count[1], 1u);
  EXPECT_EQ(delivery.malformed, 0u);
  EXPECT_EQ(delivery.disorder, 0u);
  // Garbage on the traced processes' own socket is their damage: noted, once.
  ASSERT_TRUE(consumer.corruption().tripped());
  EXPECT_EQ(consumer.corruption().what(),
            "a netlink message from the traced processes' socket has 1 bytes, no batch's size");
}

// Any local process can send to the consumer's port: what does not come from
// the channel's sending socket is not delivered (and is no traced process's
// damage); what does still is.
TEST(TransportNetlink, MessagesFromOtherSocketsAreNotDelivered) {
  NetlinkChannel channel = makeChannel({RelayMode::Block, 4 << 20, 4096, 1'000'000'000});
  NetlinkConsumer consumer(channel);
  RawSender stranger(channel, true);
  stranger.send(message(0, 2, 0));
  stranger.send(std::vector<char>(100, '\xff'));
  RawSender own(channel);
  own.send(message(0, 1, 0));
  Delivery delivery(1, true);
  consumer.poll(delivery.sink());
  EXPECT_EQ(consumer.totals().malformed, 2u);
  EXPECT_EQ(consumer.totals().messages, 1u);
  EXPECT_EQ(delivery.count[0], 1u);
  EXPECT_FALSE(consumer.corruption().tripped());
}

// A stream's pid and tid name it (and a -b trace's file): ids no thread can
// have are damage, and the message is not delivered.
TEST(TransportNetlink, MessagesNamingNoThreadAreRefused) {
  NetlinkChannel channel = makeChannel({RelayMode::Block, 4 << 20, 4096, 1'000'000'000});
  NetlinkConsumer consumer(channel);
  RawSender own(channel);
  std::vector<char> bytes = message(0, 1, 0);
  NetlinkBatchHeader h;
  std::memcpy(&h, bytes.data() + sizeof(nlmsghdr), sizeof h);
  h.pid = 0;
  std::memcpy(bytes.data() + sizeof(nlmsghdr), &h, sizeof h);
  own.send(bytes);
  Delivery delivery(1, true);
  consumer.poll(delivery.sink());
  EXPECT_EQ(consumer.totals().messages, 0u);
  EXPECT_EQ(consumer.corruption().what(),
            "a netlink message names pid 0 tid 78 as its sender, no thread's ids");
}

// A stream id is the sender's to choose: past kMaxNetlinkStreams of them the
// consumer keeps no more state, and says why.
TEST(TransportNetlink, MoreStreamsThanAnyTargetHasAreRefused) {
  NetlinkChannel channel = makeChannel({RelayMode::Block, 64 << 20, 4096, 1'000'000'000});
  NetlinkConsumer consumer(channel);
  RawSender own(channel);
  Delivery delivery(1, false);
  std::vector<char> bytes = message(0, 0, 0);
  for (uint32_t stream = 0; stream <= kMaxNetlinkStreams; ++stream) {
    NetlinkBatchHeader h;
    std::memcpy(&h, bytes.data() + sizeof(nlmsghdr), sizeof h);
    h.generation = stream;
    h.lost = 1;
    std::memcpy(bytes.data() + sizeof(nlmsghdr), &h, sizeof h);
    own.send(bytes);
    if (stream % 1024 == 0)
      consumer.poll(delivery.sink());
  }
  consumer.poll(delivery.sink());
  EXPECT_EQ(consumer.totals().messages, kMaxNetlinkStreams);
  EXPECT_EQ(consumer.totals().malformed, 1u);
  ASSERT_TRUE(consumer.corruption().tripped());
  EXPECT_NE(consumer.corruption().what().find("more than 65536 producer streams"),
            std::string::npos);
}

TEST(TransportNetlink, ConsumerGoneInBlockModeLosesRecordsWithoutHanging) {
  constexpr uint32_t kThreads = 2;
  constexpr uint64_t kRecords = 100'000;
  NetlinkChannel channel = makeChannel({RelayMode::Block, 1, 256, 100'000'000});
  channel.closeReceiver();
  NetlinkProducerCounters produced = sum(writeFromThreads(channel, kThreads, kRecords));
  EXPECT_EQ(produced.recordsWritten, 0u);
  EXPECT_EQ(produced.recordsLost, kThreads * kRecords);
}

TEST(TransportNetlink, ConsumerNotReadingInBlockModeWaitsOnceThenLoses) {
  constexpr uint32_t kThreads = 2;
  constexpr uint64_t kRecords = 100'000;
  NetlinkChannel channel = makeChannel({RelayMode::Block, 1, 256, 100'000'000});
  NetlinkProducerCounters produced = sum(writeFromThreads(channel, kThreads, kRecords));
  EXPECT_GT(produced.recordsLost, 0u);
  EXPECT_EQ(produced.recordsWritten + produced.recordsLost, kThreads * kRecords);

  NetlinkConsumer consumer(channel);
  Delivery delivery(kThreads, true);
  consumer.poll(delivery.sink());
  EXPECT_EQ(delivery.malformed, 0u);
  EXPECT_EQ(delivery.disorder, 0u);
  EXPECT_EQ(delivery.delivered, produced.recordsWritten);
  // Losses after the queue filled could not be reported: never more than happened.
  EXPECT_LE(consumer.totals().recordsLost, produced.recordsLost);
}

TEST(TransportNetlink, LargerRecordsGoAloneAndOnlyOversizedOnesAreLost) {
  NetlinkChannel channel = makeChannel({RelayMode::Block, 4 << 20, 256, 1'000'000'000});
  NetlinkConsumer consumer(channel);
  NetlinkProducer p(channel);
  ASSERT_TRUE(writeRecord(p, 0, 0));
  EXPECT_EQ(p.reserve(kNetlinkMaxMessageBytes + 1), nullptr);
  ASSERT_TRUE(writeRecord(p, 0, 1, 1000)); // past the 256-byte batch: a message of its own
  ASSERT_TRUE(writeRecord(p, 0, 2));
  p.detach();
  Delivery delivery(1, false);
  consumer.poll(delivery.sink());
  EXPECT_EQ(delivery.count[0], 3u);
  EXPECT_EQ(delivery.disorder, 0u);
  EXPECT_EQ(delivery.malformed, 0u);
  EXPECT_EQ(consumer.totals().recordsLost, 1u);
  EXPECT_EQ(p.counters().recordsLost, 1u);
  EXPECT_EQ(p.counters().recordsWritten, 3u);
  EXPECT_EQ(consumer.totals().messages, 3u);
}

TEST(TransportNetlink, OneByteBatchesSendOneRecordPerMessage) {
  NetlinkChannel channel = makeChannel({RelayMode::Block, 4 << 20, 1, 1'000'000'000});
  NetlinkConsumer consumer(channel);
  NetlinkProducer p(channel);
  constexpr uint64_t kRecords = 100;
  for (uint64_t i = 0; i < kRecords; ++i)
    ASSERT_TRUE(writeRecord(p, 0, i));
  p.detach();
  Delivery delivery(1, false);
  consumer.poll(delivery.sink());
  EXPECT_EQ(delivery.count[0], kRecords);
  EXPECT_EQ(delivery.disorder, 0u);
  EXPECT_EQ(delivery.malformed, 0u);
  // The final message of a detach may carry no record.
  EXPECT_GE(consumer.totals().messages, kRecords);
  EXPECT_LE(consumer.totals().messages, kRecords + 1);
}

TEST(TransportNetlink, FlushSendsAPartialBatch) {
  NetlinkChannel channel = makeChannel({RelayMode::Discard, 1 << 20, 4096, 1'000'000'000});
  NetlinkConsumer consumer(channel);
  NetlinkProducer p(channel);
  ASSERT_TRUE(writeRecord(p, 0, 0));
  Delivery delivery(1, false);
  EXPECT_EQ(consumer.poll(delivery.sink()), 0u);
  EXPECT_FALSE(consumer.wait(0));
  p.flush();
  EXPECT_TRUE(consumer.wait(1'000'000'000));
  EXPECT_EQ(consumer.poll(delivery.sink()), 1u);
  EXPECT_EQ(delivery.count[0], 1u);
}

TEST(TransportNetlink, AttachSendsThroughTheInheritedSocket) {
  NetlinkConfig config{RelayMode::Discard, 1 << 20, 1024, 1'000'000'000};
  NetlinkChannel channel = makeChannel(config);
  std::string error;
  auto decoded = NetlinkConfig::decode(config.encode(), &error);
  ASSERT_TRUE(decoded.has_value()) << error;
  EXPECT_EQ(decoded->mode, RelayMode::Discard);
  EXPECT_EQ(decoded->messageBytes, 1024u);
  EXPECT_EQ(decoded->blockTimeoutNs, 1'000'000'000u);
  auto attached = NetlinkChannel::attach(channel.fd(), *decoded, &error);
  ASSERT_TRUE(attached.has_value()) << error;
  EXPECT_EQ(attached->port(), channel.port());
  {
    NetlinkProducer p(*attached);
    for (uint64_t i = 0; i < 1000; ++i)
      ASSERT_TRUE(writeRecord(p, 0, i));
  }
  NetlinkConsumer consumer(channel);
  Delivery delivery(1, false);
  consumer.poll(delivery.sink());
  EXPECT_EQ(delivery.count[0], 1000u);

  int pipeFds[2];
  ASSERT_EQ(pipe(pipeFds), 0);
  EXPECT_FALSE(NetlinkChannel::attach(pipeFds[0], config, &error).has_value());
  EXPECT_NE(error.find("not a NETLINK_USERSOCK"), std::string::npos) << error;
  close(pipeFds[0]);
  close(pipeFds[1]);
}

TEST(TransportNetlink, CreateRefusesOverwriteModeAndBadSizes) {
  std::string error;
  EXPECT_FALSE(NetlinkChannel::create({RelayMode::Overwrite, 1 << 20, 4096, 1}, &error));
  EXPECT_NE(error.find("overwrite"), std::string::npos) << error;
  EXPECT_FALSE(NetlinkChannel::create({RelayMode::Block, 1 << 20, 0, 1}, &error));
  EXPECT_FALSE(
      NetlinkChannel::create({RelayMode::Block, 1 << 20, kNetlinkMaxMessageBytes + 1, 1}, &error));
  EXPECT_FALSE(NetlinkConfig::decode("overwrite:4096:1", &error));
  EXPECT_NE(error.find("overwrite"), std::string::npos) << error;
  EXPECT_FALSE(NetlinkConfig::decode("fifo:4096:1", &error));
  EXPECT_NE(error.find("unknown"), std::string::npos) << error;
  EXPECT_FALSE(NetlinkConfig::decode("block:4096", &error));
  EXPECT_FALSE(NetlinkConfig::decode("block:x:1", &error));
}

// A consumer that reads nothing until the producer has left: the losses after
// the last delivered message (the final one could not be sent either) are in
// no message, but in the shared count, so delivered + lost = fired.
TEST(TransportNetlink, LossesNoMessageReportsAreInTheSharedCount) {
  NetlinkConfig config;
  config.bufferBytes = 64 << 10;
  config.blockTimeoutNs = 20'000'000;
  NetlinkChannel channel = makeChannel(config);
  std::atomic<uint64_t> shared{0};
  channel.countLossesIn(&shared);
  // The last batch nearly full (255 of the 256 records a 4 KiB batch holds):
  // the final message is as large as those the full queue refused.
  constexpr uint64_t kRecords = 256 * 781 + 255;
  NetlinkProducer p(channel);
  for (uint64_t i = 0; i < kRecords; ++i)
    writeRecord(p, 0, i);
  p.detach(); // (a second detach could squeeze an empty final message in)
  NetlinkProducerCounters counters = p.counters();
  NetlinkConsumer consumer(channel);
  Delivery delivery(1, true);
  consumer.poll(delivery.sink());
  EXPECT_EQ(delivery.malformed, 0u);
  EXPECT_EQ(consumer.totals().recordsDelivered, counters.recordsWritten);
  EXPECT_GT(shared.load(), consumer.totals().recordsLost) << "every loss was reported anyway";
  EXPECT_EQ(shared.load(), counters.recordsLost);
  EXPECT_EQ(consumer.totals().recordsDelivered + shared.load(), kRecords);
}
