// A relay channel whose shared bytes a traced process wrote over: the consumer
// in sonde reads nothing outside a sub-buffer, never loops on what it finds,
// stops reading a damaged ring and says which ring and field; producers keep
// to the channel's own geometry.
#include "runtime/transport/RelayChannel.h"
#include "runtime/transport/RelayConsumer.h"
#include "runtime/transport/RelayProducer.h"

#include <gtest/gtest.h>

#include <string>

#include "TransportTestRecord.h"

using namespace sonde::transport;

namespace {

RelayChannel makeChannel(RelayConfig config) {
  std::string error;
  auto channel = RelayChannel::create(config, &error);
  EXPECT_TRUE(channel.has_value()) << error;
  return std::move(*channel);
}

// Records handed over, whatever they hold.
struct Chunks {
  uint32_t calls = 0;
  uint64_t bytes = 0;
  RelayConsumer::Sink sink() {
    return [this](const RelayChunk &c) {
      ++calls;
      bytes += c.size;
    };
  }
};

// A channel of one ring whose producer filled `full` sub-buffers (and left).
struct FilledRing {
  explicit FilledRing(uint32_t full, RelayMode mode = RelayMode::Block)
      : channel(makeChannel({mode, 4096, 4, 1})) {
    RelayProducer p(channel);
    for (uint32_t i = 0; i < full * (4096 / 64); ++i)
      writeRecord(p, 0, i, 64);
    p.detach();
  }
  RelayRingHeader &ring() { return channel.ring(0); }
  RelayChannel channel;
};

std::string what(const RelayConsumer &c) { return c.corruption().what(); }

} // namespace

TEST(TransportRelayDamage, AProducerFarAheadOfTheConsumerDamagesItsRingOnly) {
  FilledRing filled(2);
  RelayConsumer consumer(filled.channel);
  filled.ring().head.store(filled.ring().head.load() + 0x7fff0000u);
  Chunks chunks;
  EXPECT_EQ(consumer.poll(chunks.sink()), 0u);
  EXPECT_EQ(consumer.flushAll(chunks.sink()), 0u);
  EXPECT_EQ(chunks.bytes, 0u);
  ASSERT_TRUE(consumer.corruption().tripped());
  EXPECT_EQ(what(consumer).rfind("relay ring 0 (last written by pid ", 0), 0u) << what(consumer);
  EXPECT_NE(what(consumer).find("more than 4 ahead of the consumer's 0"), std::string::npos)
      << what(consumer);
  // Nothing is waiting on a damaged ring: the drain sleeps instead of spinning.
  EXPECT_FALSE(consumer.wait(1'000'000));
}

TEST(TransportRelayDamage, ASlotClaimingMoreBytesThanItsSubbufferIsNotRead) {
  FilledRing filled(2);
  RelayConsumer consumer(filled.channel);
  filled.channel.slot(0, 1).used.store(0xfffffff0u);
  Chunks chunks;
  consumer.poll(chunks.sink());
  EXPECT_EQ(chunks.calls, 1u); // sub-buffer 0, whole, before the damaged one
  EXPECT_EQ(chunks.bytes, 4096u);
  EXPECT_NE(what(consumer).find("sub-buffer 1 says it holds 4294967280 bytes, more than its 4096"),
            std::string::npos)
      << what(consumer);
  // And the ring is not read again, even once it looks sound.
  filled.channel.slot(0, 1).used.store(64);
  EXPECT_EQ(consumer.flushAll(chunks.sink()), 0u);
}

TEST(TransportRelayDamage, ASlotHoldingAnotherSubbufferNumberIsNotRead) {
  FilledRing filled(3);
  RelayConsumer consumer(filled.channel);
  filled.channel.slot(0, 2).subbuf.store(77);
  Chunks chunks;
  consumer.poll(chunks.sink());
  EXPECT_EQ(chunks.calls, 2u);
  EXPECT_NE(what(consumer).find("the slot of full sub-buffer 2 holds number 77"), std::string::npos)
      << what(consumer);
}

// The consumer's place is its own: a tail written over in the ring changes
// nothing it reads (each sub-buffer once).
TEST(TransportRelayDamage, TheSharedTailIsNotTheConsumers) {
  FilledRing filled(2);
  RelayConsumer consumer(filled.channel);
  Chunks chunks;
  consumer.poll(chunks.sink());
  EXPECT_EQ(chunks.calls, 2u);
  filled.ring().tail.store(0);
  consumer.poll(chunks.sink());
  consumer.flushAll(chunks.sink());
  EXPECT_EQ(chunks.calls, 2u);
  EXPECT_FALSE(consumer.corruption().tripped());
}

TEST(TransportRelayDamage, StaticHeaderFieldsOverwrittenStopAllReading) {
  const char *fields[] = {"magic", "subbufSize", "ringCount", "offsets"};
  for (const char *field : fields) {
    FilledRing filled(1);
    RelayConsumer consumer(filled.channel);
    RelayHeader &h = filled.channel.header();
    std::string name = field;
    if (name == "magic")
      h.magic[0] = 'X';
    else if (name == "subbufSize")
      h.subbufSize = 1u << 31;
    else if (name == "ringCount")
      h.ringCount = 1u << 30;
    else
      h.dataOffset = ~0ull;
    Chunks chunks;
    EXPECT_EQ(consumer.flushAll(chunks.sink()), 0u) << field;
    EXPECT_EQ(what(consumer),
              "the relay channel's header: its static field '" + name + "' was overwritten");
  }
}

// The flight recorder's dump checks the slots it copies the same way.
TEST(TransportRelayDamage, OverwriteDumpSkipsADamagedSlot) {
  FilledRing filled(2, RelayMode::Overwrite);
  RelayConsumer consumer(filled.channel);
  filled.channel.slot(0, 1).used.store(4097);
  Chunks chunks;
  consumer.dumpRecent(chunks.sink());
  EXPECT_EQ(chunks.bytes, 4096u);
  EXPECT_NE(what(consumer).find("sub-buffer 1 says it holds 4097 bytes"), std::string::npos)
      << what(consumer);
}

// Geometry comes from the channel, never from the header a target can write:
// a producer writes within its sub-buffer whatever the header says.
TEST(TransportRelayDamage, ProducersKeepToTheChannelsOwnGeometry) {
  RelayChannel channel = makeChannel({RelayMode::Discard, 4096, 4, 2});
  RelayHeader &h = channel.header();
  h.subbufSize = 1u << 30;
  h.subbufCount = 1u << 20;
  h.dataOffset = 1ull << 40;
  h.blockTimeoutNs = ~0ull;
  RelayProducer p(channel);
  uint64_t written = 0;
  for (uint32_t i = 0; i < 1000; ++i)
    written += writeRecord(p, 0, i, 100);
  EXPECT_FALSE(writeRecord(p, 0, 1000, 5000)) << "larger than the real sub-buffer";
  p.detach();
  EXPECT_EQ(channel.subbufSize(), 4096u);
  EXPECT_EQ(written, 4u * (4096 / 100)); // discard mode: four sub-buffers' worth, the rest lost
}

// The writer a slot names becomes a stream's identity (and a -b trace's file
// name): ids no thread can have are damage.
TEST(TransportRelayDamage, ASlotNamingNoThreadAsItsWriterIsNotRead) {
  FilledRing filled(2);
  RelayConsumer consumer(filled.channel);
  filled.channel.slot(0, 1).owner.store(0xffffffff00000001ull);
  Chunks chunks;
  consumer.poll(chunks.sink());
  EXPECT_EQ(chunks.calls, 1u);
  EXPECT_NE(what(consumer).find("sub-buffer 1 names pid 4294967295 tid 1 as its writer, no "
                                "thread's ids"),
            std::string::npos)
      << what(consumer);
}
