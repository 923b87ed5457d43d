// RelayChannel, RelayProducer, RelayConsumer: delivery, order, loss accounting
// in every mode, across threads and processes.
#include "runtime/transport/RelayChannel.h"
#include "runtime/transport/RelayConsumer.h"
#include "runtime/transport/RelayProducer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <csignal>
#include <cstring>
#include <sys/mman.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "TransportTestRecord.h"

using namespace sonde::transport;

namespace {

// What the consumer hands over, checked record by record (TestRecordOrder).
struct Delivery : TestRecordOrder {
  using TestRecordOrder::TestRecordOrder;

  RelayConsumer::Sink sink() {
    return [this](const RelayChunk &c) { take(c.data, c.size, [](const TestRecord &) {}); };
  }
};

RelayChannel makeChannel(RelayConfig config) {
  std::string error;
  auto channel = RelayChannel::create(config, &error);
  EXPECT_TRUE(channel.has_value()) << error;
  return std::move(*channel);
}

// Consumes on its own thread until `done` (set after every producer detached),
// then takes what is left.
void consumeUntil(RelayConsumer &consumer, Delivery &delivery, const std::atomic<bool> &done,
                  unsigned pauseUs = 0) {
  auto sink = delivery.sink();
  while (!done.load()) {
    if (pauseUs)
      usleep(pauseUs);
    else
      consumer.wait(10'000'000);
    consumer.poll(sink);
  }
  consumer.flushAll(sink);
}

} // namespace

// `threads` producers, each writing records 0..records-1 and detaching; returns
// how many writes failed (lost).
uint64_t writeFromThreads(const RelayChannel &channel, uint32_t threads, uint64_t records) {
  std::vector<std::thread> writers;
  std::atomic<uint64_t> failed{0};
  for (uint32_t t = 0; t < threads; ++t)
    writers.emplace_back([&, t] {
      RelayProducer p(channel);
      for (uint64_t i = 0; i < records; ++i)
        if (!writeRecord(p, t, i))
          failed.fetch_add(1);
      p.detach();
    });
  for (auto &w : writers)
    w.join();
  return failed.load();
}

TEST(TransportRelay, BlockModeDeliversEveryRecordOnceInOrder) {
  constexpr uint32_t kThreads = 4;
  constexpr uint64_t kRecords = 5'000'000;
  RelayChannel channel = makeChannel({RelayMode::Block, 64 * 1024, 8, kThreads});
  RelayConsumer consumer(channel);
  Delivery delivery(kThreads, false);
  std::atomic<bool> done{false};
  std::thread reader([&] { consumeUntil(consumer, delivery, done); });
  uint64_t failed = writeFromThreads(channel, kThreads, kRecords);
  done.store(true);
  reader.join();

  EXPECT_EQ(failed, 0u);
  EXPECT_EQ(delivery.malformed, 0u);
  EXPECT_EQ(delivery.disorder, 0u);
  for (uint32_t t = 0; t < kThreads; ++t)
    EXPECT_EQ(delivery.count[t], kRecords) << "thread " << t;
  RelayCounters totals = channel.totals();
  EXPECT_EQ(totals.recordsWritten, kThreads * kRecords);
  EXPECT_EQ(totals.recordsLost, 0u);
  EXPECT_EQ(totals.bytesWritten, kThreads * kRecords * sizeof(TestRecord));
}

TEST(TransportRelay, DiscardModeCountsEveryDroppedRecord) {
  constexpr uint32_t kThreads = 2;
  constexpr uint64_t kRecords = 100'000;
  RelayChannel channel = makeChannel({RelayMode::Discard, 64, 2, kThreads});
  RelayConsumer consumer(channel);
  Delivery delivery(kThreads, true);
  std::atomic<bool> done{false};
  std::thread reader([&] { consumeUntil(consumer, delivery, done, 200); });
  uint64_t dropped = writeFromThreads(channel, kThreads, kRecords);
  done.store(true);
  reader.join();

  RelayCounters totals = channel.totals();
  EXPECT_EQ(delivery.malformed, 0u);
  EXPECT_EQ(delivery.disorder, 0u);
  EXPECT_GT(totals.recordsLost, 0u);
  EXPECT_GT(delivery.delivered, 0u);
  EXPECT_EQ(totals.recordsLost, dropped);
  EXPECT_EQ(delivery.delivered + totals.recordsLost, kThreads * kRecords);
  EXPECT_EQ(totals.recordsWritten, delivery.delivered);
  // A thread that starts after another detached may reuse its ring: sum the rings.
  uint64_t fired = 0;
  for (uint32_t r = 0; r < kThreads; ++r) {
    RelayCounters c = channel.ringCounters(r);
    fired += c.recordsWritten + c.recordsLost;
  }
  EXPECT_EQ(fired, kThreads * kRecords);
}

TEST(TransportRelay, OverwriteModeKeepsTheMostRecentRecords) {
  constexpr uint64_t kRecords = 10'000;
  constexpr uint32_t kPerSubbuf = 256 / sizeof(TestRecord);
  RelayChannel channel = makeChannel({RelayMode::Overwrite, 256, 4, 1});
  RelayProducer p(channel);
  for (uint64_t i = 0; i < kRecords; ++i)
    ASSERT_TRUE(writeRecord(p, 0, i));
  RelayConsumer consumer(channel);
  EXPECT_EQ(consumer.poll([](const RelayChunk &) {}), 0u);
  std::vector<uint64_t> seen;
  consumer.dumpRecent([&](const RelayChunk &c) {
    for (uint32_t at = 0; at + sizeof(TestRecord) <= c.size; at += sizeof(TestRecord)) {
      TestRecord rec;
      std::memcpy(&rec, c.data + at, sizeof rec);
      seen.push_back(rec.seq);
    }
  });
  // Three full sub-buffers and the open one, which the last record filled.
  ASSERT_EQ(seen.size(), 4 * kPerSubbuf);
  for (size_t i = 0; i < seen.size(); ++i)
    EXPECT_EQ(seen[i], kRecords - seen.size() + i);
  RelayCounters c = channel.ringCounters(0);
  EXPECT_EQ(c.recordsWritten, kRecords);
  EXPECT_EQ(c.recordsOverwritten + seen.size(), kRecords);
  EXPECT_EQ(c.recordsLost, 0u);
}

// A thread that ends hands its open sub-buffer over (head moves on, no
// sub-buffer open): the dump still has it, so dumped + overwritten = written.
TEST(TransportRelay, OverwriteDumpAfterTheProducerLeftHasEveryRecordNotOverwritten) {
  constexpr uint32_t kPerSubbuf = 256 / sizeof(TestRecord);
  RelayChannel channel = makeChannel({RelayMode::Overwrite, 256, 4, 1});
  const uint64_t records = 10 * kPerSubbuf + 3; // the last sub-buffer partly filled
  {
    RelayProducer p(channel);
    for (uint64_t i = 0; i < records; ++i)
      ASSERT_TRUE(writeRecord(p, 0, i));
    p.detach();
  }
  RelayConsumer consumer(channel);
  Delivery delivery(1, false);
  std::vector<uint64_t> seen;
  consumer.dumpRecent([&](const RelayChunk &c) {
    delivery.take(c.data, c.size, [&](const TestRecord &rec) { seen.push_back(rec.seq); });
  });
  RelayCounters c = channel.ringCounters(0);
  EXPECT_EQ(c.recordsWritten, records);
  EXPECT_EQ(c.recordsOverwritten + seen.size(), records);
  ASSERT_EQ(seen.size(), 3 * kPerSubbuf + 3);
  EXPECT_EQ(seen.back(), records - 1);
  EXPECT_EQ(delivery.malformed, 0u);
}

TEST(TransportRelay, OverwriteDumpWhileTheProducerWritesSeesWholeRecords) {
  RelayChannel channel = makeChannel({RelayMode::Overwrite, 512, 4, 1});
  std::atomic<bool> done{false};
  std::thread writer([&] {
    RelayProducer p(channel);
    for (uint64_t i = 0; !done.load(); ++i)
      writeRecord(p, 0, i, sizeof(TestRecord) + uint32_t(i % 29));
  });
  while (channel.ringCounters(0).recordsWritten < 10'000)
    std::this_thread::yield();
  RelayConsumer consumer(channel);
  uint64_t delivered = 0;
  for (int dump = 0; dump < 200; ++dump) {
    Delivery delivery(1, true);
    consumer.dumpRecent(delivery.sink());
    EXPECT_EQ(delivery.malformed, 0u);
    EXPECT_EQ(delivery.disorder, 0u);
    delivered += delivery.delivered;
  }
  done.store(true);
  writer.join();
  EXPECT_GT(delivered, 0u);
}

TEST(TransportRelay, RecordsNeverStraddleSubbuffers) {
  RelayChannel channel = makeChannel({RelayMode::Block, 256, 4, 1});
  RelayConsumer consumer(channel);
  Delivery delivery(1, false);
  RelayProducer p(channel);
  uint64_t bytes = 0;
  for (uint64_t i = 0; i < 5000; ++i) {
    uint32_t size = sizeof(TestRecord) + uint32_t(i * 37 % 101);
    ASSERT_TRUE(writeRecord(p, 0, i, size));
    bytes += size;
    consumer.poll(delivery.sink());
  }
  EXPECT_EQ(p.reserve(257), nullptr) << "a record larger than a sub-buffer is lost";
  consumer.flushAll(delivery.sink());
  EXPECT_EQ(delivery.malformed, 0u);
  EXPECT_EQ(delivery.disorder, 0u);
  EXPECT_EQ(delivery.delivered, 5000u);
  RelayCounters c = channel.ringCounters(0);
  EXPECT_EQ(c.bytesWritten, bytes);
  EXPECT_EQ(c.recordsLost, 1u);
}

TEST(TransportRelay, FlushAllThenMoreRecordsReadsEachOnce) {
  RelayChannel channel = makeChannel({RelayMode::Block, 1024, 2, 1});
  RelayConsumer consumer(channel);
  Delivery delivery(1, false);
  RelayProducer p(channel);
  for (uint64_t i = 0; i < 10; ++i)
    ASSERT_TRUE(writeRecord(p, 0, i));
  consumer.flushAll(delivery.sink());
  EXPECT_EQ(delivery.delivered, 10u);
  for (uint64_t i = 10; i < 100; ++i) // 1600 bytes: fits without a consumer
    ASSERT_TRUE(writeRecord(p, 0, i));
  p.detach();
  consumer.flushAll(delivery.sink());
  EXPECT_EQ(delivery.delivered, 100u);
  EXPECT_EQ(delivery.disorder, 0u);
}

TEST(TransportRelay, RecordIsLostWhenRingsRunOut) {
  RelayChannel channel = makeChannel({RelayMode::Discard, 256, 2, 2});
  RelayProducer a(channel), b(channel), c(channel);
  ASSERT_TRUE(writeRecord(a, 0, 0));
  ASSERT_TRUE(writeRecord(b, 1, 0));
  EXPECT_FALSE(writeRecord(c, 2, 0));
  EXPECT_EQ(c.ring(), -1);
  EXPECT_EQ(channel.totals().recordsLost, 1u);
  a.detach();
  // c looks for a ring again only after a bounded number of drops.
  uint64_t drops = 1;
  while (!writeRecord(c, 2, drops) && drops < 5000)
    ++drops;
  EXPECT_LT(drops, 5000u);
  EXPECT_EQ(c.ring(), 0);
  EXPECT_EQ(channel.totals().recordsLost, drops);
}

TEST(TransportRelay, RingOfADeadProducerIsReclaimedWithItsRecords) {
  RelayChannel channel = makeChannel({RelayMode::Block, 1024, 2, 1});
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    RelayProducer p(channel);
    bool ok = true;
    for (uint64_t i = 0; i < 10; ++i)
      ok = writeRecord(p, 0, i) && ok;
    _exit(ok ? 0 : 1); // dies without detach(): the ring stays claimed
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_NE(channel.ring(0).owner.load(), 0u);
  RelayProducer p(channel);
  for (uint64_t i = 10; i < 20; ++i)
    ASSERT_TRUE(writeRecord(p, 0, i));
  EXPECT_EQ(p.ring(), 0);
  RelayConsumer consumer(channel);
  Delivery delivery(1, false);
  consumer.flushAll(delivery.sink());
  EXPECT_EQ(delivery.delivered, 20u);
  EXPECT_EQ(delivery.disorder, 0u);
}

TEST(TransportRelay, ForkedChildWritesToItsOwnRing) {
  RelayChannel channel = makeChannel({RelayMode::Block, 1024, 2, 2});
  RelayProducer p(channel);
  ASSERT_TRUE(writeRecord(p, 0, 0));
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    p.forgetAfterFork();
    bool ok = writeRecord(p, 1, 0) && p.ring() == 1;
    p.detach();
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ASSERT_TRUE(writeRecord(p, 0, 1));
  p.detach();
  RelayConsumer consumer(channel);
  Delivery delivery(2, false);
  consumer.flushAll(delivery.sink());
  EXPECT_EQ(delivery.count[0], 2u);
  EXPECT_EQ(delivery.count[1], 1u);
  EXPECT_EQ(delivery.disorder, 0u);
}

TEST(TransportRelay, ProducerInAChildProcessConsumerInTheParent) {
  constexpr uint64_t kRecords = 300'000;
  RelayChannel channel = makeChannel({RelayMode::Block, 4096, 4, 2});
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto mapped = RelayChannel::attach(channel.fd(), nullptr);
    if (!mapped)
      _exit(2);
    RelayProducer p(*mapped);
    for (uint64_t i = 0; i < kRecords; ++i)
      if (!writeRecord(p, 0, i))
        _exit(1);
    p.detach();
    _exit(0);
  }
  RelayConsumer consumer(channel);
  Delivery delivery(1, false);
  int status = 0;
  while (waitpid(child, &status, WNOHANG) == 0) {
    consumer.wait(10'000'000);
    consumer.poll(delivery.sink());
  }
  consumer.flushAll(delivery.sink());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(delivery.delivered, kRecords);
  EXPECT_EQ(delivery.disorder, 0u);
  EXPECT_EQ(delivery.malformed, 0u);
  EXPECT_EQ(channel.totals().recordsWritten, kRecords);
}

TEST(TransportRelay, KilledConsumerDoesNotHangABlockedProducer) {
  constexpr uint64_t kRecords = 1000;
  RelayChannel channel = makeChannel({RelayMode::Block, 64, 2, 1, /*blockTimeoutNs=*/200'000'000});
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // A consumer that takes two sub-buffers, then stops reading (until killed).
    auto mapped = RelayChannel::attach(channel.fd(), nullptr);
    if (!mapped)
      _exit(2);
    RelayConsumer consumer(*mapped);
    size_t chunks = 0;
    while (chunks < 2) {
      consumer.wait(10'000'000);
      chunks += consumer.poll([](const RelayChunk &) {});
    }
    for (;;)
      pause();
  }
  RelayProducer p(channel);
  uint64_t written = 0;
  std::thread writer([&] {
    for (uint64_t i = 0; i < kRecords; ++i)
      written += writeRecord(p, 0, i);
    p.detach();
  });
  RelayRingHeader &ring = channel.ring(0);
  for (int i = 0; i < 10'000 && !(ring.tail.load() >= 2 && ring.producerWaiting.load()); ++i)
    usleep(1000);
  EXPECT_GE(ring.tail.load(), 2u);
  EXPECT_EQ(ring.producerWaiting.load(), 1u) << "the producer should be blocked";
  kill(child, SIGKILL);
  int status = 0;
  waitpid(child, &status, 0);
  writer.join();

  RelayCounters c = channel.ringCounters(0);
  EXPECT_EQ(c.recordsWritten, written);
  EXPECT_GT(c.recordsLost, 0u);
  EXPECT_EQ(c.recordsWritten + c.recordsLost, kRecords);
}

TEST(TransportRelay, AttachRejectsAForeignFile) {
  int fd = memfd_create("not-relay", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, 8192), 0);
  std::string error;
  EXPECT_FALSE(RelayChannel::attach(fd, &error).has_value());
  EXPECT_EQ(error, "not a sonde relay channel");
  close(fd);
}

TEST(TransportRelay, CreateRejectsSizesThatAreNotPowersOfTwo) {
  std::string error;
  EXPECT_FALSE(RelayChannel::create({RelayMode::Block, 1000, 4, 1}, &error).has_value());
  EXPECT_FALSE(RelayChannel::create({RelayMode::Block, 1024, 3, 1}, &error).has_value());
  EXPECT_FALSE(RelayChannel::create({RelayMode::Block, 1024, 4, 0}, &error).has_value());
}
