// The binary record format: round trips, timestamps, sizes, and text from
// decoded records equal to text formatted in the handler.
#include "runtime/format/FormatParser.h"
#include "runtime/transport/RecordCodec.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace {

constexpr uint8_t kLong = SONDE_RECORD_ARG_LONG;
constexpr uint8_t kString = SONDE_RECORD_ARG_STRING;
constexpr uint8_t kTime = SONDE_RECORD_ARG_TIME;

// 2 GHz from reading 0; CLOCK_REALTIME 1.7e18 ns there.
const sonde_trace_clock kClock{0,  1000,           1700000000000000000, uint64_t{1} << 31,
                               32, SONDE_CLOCK_TSC};

// One stream: encodes records into a byte vector as a relay sub-buffer would hold them.
struct Writer {
  sonde_record_stream stream{};
  std::vector<uint8_t> bytes;

  size_t put(uint32_t id, uint64_t reading, const sonde_record_desc &desc,
             const std::vector<SondeFormatArg> &args) {
    const size_t max = sonde_record_max_size(&desc, args.data());
    const size_t at = bytes.size();
    bytes.resize(at + max);
    const size_t n = sonde_record_encode(&stream, id, reading, &desc, args.data(), &bytes[at]);
    EXPECT_LE(n, max);
    bytes.resize(at + n);
    return n;
  }
};

struct Event {
  uint32_t id;
  uint64_t reading;
  std::vector<SondeFormatArg> args;
  std::vector<std::string> strings; // copies: the scratch is reused

  // The arguments with strings pointing at this event's copies.
  std::vector<SondeFormatArg> formatArgs() const {
    std::vector<SondeFormatArg> out = args;
    for (size_t i = 0; i < out.size(); ++i)
      if (isString[i])
        out[i].s = strings[i].c_str();
    return out;
  }
  std::vector<bool> isString;
};

// Decodes a whole stream into its events, failing the test on any other status.
struct Reader {
  sonde_record_decoder decoder{};
  std::vector<char> scratch = std::vector<char>(1 << 16);
  int clockRecords = 0;

  Reader(const std::vector<sonde_record_desc> &descs, uint32_t shift = 0) {
    decoder.stream.shift = shift;
    decoder.clock = &kClock;
    decoder.descs = descs.data();
    decoder.desc_count = static_cast<uint32_t>(descs.size());
  }

  std::vector<Event> all(const std::vector<uint8_t> &bytes) {
    std::vector<Event> events;
    size_t at = 0;
    while (at < bytes.size()) {
      SondeFormatArg args[16];
      sonde_decoded_record rec{};
      const int status = sonde_record_decode(&decoder, &bytes[at], bytes.size() - at, args, 16,
                                             scratch.data(), scratch.size(), &rec);
      if (status == SONDE_RECORD_CLOCK) {
        ++clockRecords;
      } else if (status == SONDE_RECORD_EVENT) {
        Event e{rec.id, rec.reading, {args, args + rec.arg_count}, {}, {}};
        const sonde_record_desc &desc = decoder.descs[rec.id];
        for (uint32_t i = 0; i < desc.count; ++i) {
          e.isString.push_back(desc.kinds[i] == kString);
          e.strings.push_back(desc.kinds[i] == kString ? args[i].s : "");
        }
        events.push_back(e);
      } else {
        ADD_FAILURE() << "status " << status << " at byte " << at;
        break;
      }
      at += rec.size;
    }
    return events;
  }
};

SondeFormatArg longArg(int64_t v) {
  SondeFormatArg a;
  a.i = v;
  return a;
}

SondeFormatArg stringArg(const std::string &s) {
  SondeFormatArg a;
  a.s = s.c_str();
  return a;
}

TEST(TransportCodec, LongsRoundTrip) {
  static const uint8_t kinds[] = {kLong};
  const std::vector<sonde_record_desc> descs{{kinds, 1}};
  std::vector<int64_t> values{0, 1, -1, 63, -64, 64, -65, INT64_MIN, INT64_MAX, INT32_MIN};
  std::mt19937_64 random(42);
  for (int i = 0; i < 1000; ++i)
    values.push_back(static_cast<int64_t>(random()) >> (random() % 64));
  Writer w;
  for (size_t i = 0; i < values.size(); ++i)
    w.put(0, 100 + i, descs[0], {longArg(values[i])});
  Reader r(descs);
  const std::vector<Event> events = r.all(w.bytes);
  ASSERT_EQ(events.size(), values.size());
  for (size_t i = 0; i < values.size(); ++i)
    EXPECT_EQ(events[i].args[0].i, values[i]) << i;
}

TEST(TransportCodec, LongsUseZigzagVarintSizes) {
  static const uint8_t kinds[] = {kLong};
  const sonde_record_desc desc{kinds, 1};
  const std::pair<int64_t, size_t> cases[] = {{0, 1},  {-1, 1},  {63, 1},         {-64, 1},
                                              {64, 2}, {-65, 2}, {INT64_MAX, 10}, {INT64_MIN, 10}};
  for (const auto &[value, size] : cases) {
    Writer w;
    w.put(1, 0, desc, {longArg(value)}); // starts the stream
    EXPECT_EQ(w.put(1, 0, desc, {longArg(value)}), SONDE_RECORD_HEADER_SIZE + size) << value;
  }
}

TEST(TransportCodec, StringsRoundTrip) {
  static const uint8_t kinds[] = {kString, kLong, kString};
  const std::vector<sonde_record_desc> descs{{kinds, 3}};
  std::string every;
  for (int c = 1; c < 256; ++c)
    every.push_back(static_cast<char>(c));
  const std::vector<std::string> strings{
      "", "a", "line\nwith\ttabs", every, std::string(5000, 'x'), "\x80\xff\x01"};
  Writer w;
  for (size_t i = 0; i < strings.size(); ++i)
    w.put(0, 10 * i, descs[0],
          {stringArg(strings[i]), longArg(static_cast<int64_t>(i)), stringArg(strings[0])});
  Reader r(descs);
  const std::vector<Event> events = r.all(w.bytes);
  ASSERT_EQ(events.size(), strings.size());
  for (size_t i = 0; i < strings.size(); ++i) {
    EXPECT_EQ(events[i].strings[0], strings[i]) << i;
    EXPECT_EQ(events[i].args[1].i, static_cast<int64_t>(i));
    EXPECT_EQ(events[i].strings[2], "");
  }
}

TEST(TransportCodec, StringIsLengthAndBytes) {
  static const uint8_t kinds[] = {kString};
  const sonde_record_desc desc{kinds, 1};
  Writer w;
  const std::string s(200, 'q'); // a two-byte length
  w.put(0, 0, desc, {stringArg("")});
  EXPECT_EQ(w.put(0, 0, desc, {stringArg("")}), SONDE_RECORD_HEADER_SIZE + 1u);
  EXPECT_EQ(w.put(0, 0, desc, {stringArg(s)}), SONDE_RECORD_HEADER_SIZE + 2 + s.size());
}

TEST(TransportCodec, TimeArgumentIsTheRecordTimeInRealtimeNs) {
  static const uint8_t kinds[] = {kTime, kLong, kTime};
  const std::vector<sonde_record_desc> descs{{kinds, 3}};
  Writer w;
  w.put(0, 5000, descs[0], {longArg(0), longArg(7), longArg(0)});
  EXPECT_EQ(w.put(0, 5400, descs[0], {longArg(0), longArg(7), longArg(0)}),
            SONDE_RECORD_HEADER_SIZE + 1u); // times take no bytes
  Reader r(descs);
  const std::vector<Event> events = r.all(w.bytes);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].args[0].i, 1700000000000002500); // 5000 ticks at 2 GHz
  EXPECT_EQ(events[1].args[0].i, 1700000000000002700);
  EXPECT_EQ(events[1].args[2].i, events[1].args[0].i);
  EXPECT_EQ(events[1].args[1].i, 7);
}

TEST(TransportCodec, DeltaOverflowWritesExtendedRecords) {
  const std::vector<sonde_record_desc> descs{{nullptr, 0}};
  const uint64_t base = 0x123456789abcull;
  const uint64_t limit = SONDE_RECORD_DELTA_LIMIT;
  Writer w;
  // The first record, one whose delta just fits, one just past, one backwards.
  EXPECT_EQ(w.put(0, base, descs[0], {}), 16u);
  EXPECT_EQ(w.put(0, base + limit - 1, descs[0], {}), 4u);
  EXPECT_EQ(w.put(0, base + 2 * limit - 1, descs[0], {}), 16u);
  EXPECT_EQ(w.put(0, base + 2 * limit - 2, descs[0], {}), 16u);
  EXPECT_EQ(w.put(0, UINT64_MAX, descs[0], {}), 16u);
  Reader r(descs);
  const std::vector<Event> events = r.all(w.bytes);
  EXPECT_EQ(r.clockRecords, 4);
  ASSERT_EQ(events.size(), 5u);
  EXPECT_EQ(events[0].reading, base);
  EXPECT_EQ(events[1].reading, base + limit - 1);
  EXPECT_EQ(events[2].reading, base + 2 * limit - 1);
  EXPECT_EQ(events[3].reading, base + 2 * limit - 2);
  EXPECT_EQ(events[4].reading, UINT64_MAX);
}

TEST(TransportCodec, StreamDecodesExactTimestamps) {
  static const uint8_t kinds[] = {kLong};
  const std::vector<sonde_record_desc> descs{{nullptr, 0}, {kinds, 1}};
  std::mt19937_64 random(7);
  std::vector<uint64_t> readings;
  std::vector<uint32_t> ids;
  uint64_t t = random();
  Writer w;
  for (int i = 0; i < 5000; ++i) {
    // Mostly small steps, some past the delta field, a few backwards.
    const uint64_t roll = random() % 100;
    t += roll < 90   ? random() % 100
         : roll < 98 ? random() % (4 * SONDE_RECORD_DELTA_LIMIT)
                     : -(random() % 1000);
    const uint32_t id = static_cast<uint32_t>(random() % 2);
    readings.push_back(t);
    ids.push_back(id);
    w.put(id, t, descs[id], {longArg(i)});
  }
  Reader r(descs);
  const std::vector<Event> events = r.all(w.bytes);
  ASSERT_EQ(events.size(), readings.size());
  for (size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(events[i].reading, readings[i]) << i;
    EXPECT_EQ(events[i].id, ids[i]) << i;
  }
}

TEST(TransportCodec, ShiftedStreamKeepsTimestampsToItsUnit) {
  const std::vector<sonde_record_desc> descs{{nullptr, 0}};
  const uint32_t shift = 4;
  Writer w;
  w.stream.shift = shift;
  const uint64_t readings[] = {1000, 1017, 1017 + (SONDE_RECORD_DELTA_LIMIT << shift) - 100,
                               1017 + (SONDE_RECORD_DELTA_LIMIT << (shift + 1)) + 100};
  for (uint64_t t : readings)
    w.put(0, t, descs[0], {});
  Reader r(descs, shift);
  const std::vector<Event> events = r.all(w.bytes);
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(r.clockRecords, 2); // the start, and the step past 2^20 units
  for (size_t i = 0; i < 4; ++i)
    EXPECT_EQ(events[i].reading, readings[i] >> shift << shift) << i;
}

TEST(TransportCodec, RestartWritesAFullTimestamp) {
  const std::vector<sonde_record_desc> descs{{nullptr, 0}};
  Writer w;
  w.put(0, 10, descs[0], {});
  sonde_record_stream_restart(&w.stream);
  const size_t at = w.bytes.size();
  EXPECT_EQ(w.put(0, 11, descs[0], {}), 16u);
  // The restarted part decodes on its own.
  Reader r(descs);
  const std::vector<Event> events = r.all({w.bytes.begin() + at, w.bytes.end()});
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].reading, 11u);
}

TEST(TransportCodec, SeedRecordFitsInEightBytes) {
  // printf("%d : %d\n", gettimeofday_ns(), $arg1) with $arg1 a loop counter below 10^7.
  static const uint8_t kinds[] = {kTime, kLong};
  const sonde_record_desc desc{kinds, 2};
  Writer w;
  w.put(1, 1000, desc, {longArg(0), longArg(0)});
  EXPECT_LE(w.put(1, 1030, desc, {longArg(0), longArg(9999999)}), 8u);
  EXPECT_EQ(w.put(1, 1060, desc, {longArg(0), longArg(5)}), 5u);
}

// Text from decoded records equals text formatted directly in the handler,
// where gettimeofday_ns() gave the record time's realtime ns.
TEST(TransportCodec, DecodedTextEqualsDirectText) {
  struct Case {
    std::string format;
    std::vector<uint8_t> kinds;
    std::vector<std::string> strings; // for string kinds, in order
    std::vector<int64_t> longs;       // for long kinds, in order
  };
  const std::vector<Case> cases{
      {"%d : %d\n", {kTime, kLong}, {}, {1234567}},
      {"%s=%x\n", {kString, kLong}, {"key"}, {-255}},
      {"%-10s|%5d|%c|\n", {kString, kLong, kLong}, {"left"}, {-42, 'Z'}},
      {"%*d|%.*s|\n", {kLong, kLong, kLong, kString}, {"truncated"}, {8, 77, 3}},
      {"%p %o %X %u %#x\n", {kLong, kLong, kLong, kLong, kLong}, {}, {4096, 8, 48879, -1, 0}},
      {"%b%s", {kLong, kString}, {"tail\x01\xff"}, {0x0102030405060708}},
      {"%%%d%% at %u\n", {kLong, kTime}, {}, {INT64_MIN}},
      {"%+d % d %05d\n", {kLong, kLong, kLong}, {}, {5, 6, -7}},
      {"no args\n", {}, {}, {}}};
  std::vector<sonde::format::ParsedFormat> parsed;
  std::vector<sonde_record_desc> descs;
  for (const Case &c : cases) {
    parsed.push_back(sonde::format::parseFormat(c.format));
    ASSERT_TRUE(parsed.back().ok()) << c.format;
    ASSERT_EQ(parsed.back().argCount(), c.kinds.size()) << c.format;
  }
  for (const Case &c : cases)
    descs.push_back({c.kinds.data(), static_cast<uint32_t>(c.kinds.size())});

  auto text = [&](size_t id, const SondeFormatArg *args) {
    const SondeFormatSpec spec{cases[id].format.c_str(), parsed[id].items.data(),
                               static_cast<uint32_t>(parsed[id].items.size()),
                               parsed[id].argCount()};
    std::string out(SONDE_PRINT_BUFFER_SIZE, '\0');
    out.resize(sonde_format_print(&spec, args, out.data(), out.size(), nullptr, nullptr));
    return out;
  };

  Writer w;
  std::string direct;
  uint64_t reading = 777777;
  for (int round = 0; round < 3; ++round) {
    for (size_t id = 0; id < cases.size(); ++id) {
      reading += 1000 + id;
      std::vector<SondeFormatArg> args;
      size_t s = 0, l = 0;
      for (uint8_t kind : cases[id].kinds) {
        if (kind == kString)
          args.push_back(stringArg(cases[id].strings[s++]));
        else if (kind == kLong)
          args.push_back(longArg(cases[id].longs[l++]));
        else
          args.push_back(longArg(sonde_trace_clock_to_realtime_ns(&kClock, reading)));
      }
      direct += text(id, args.data());
      w.put(static_cast<uint32_t>(id), reading, descs[id], args);
    }
  }

  Reader r(descs);
  std::string decoded;
  for (const Event &e : r.all(w.bytes))
    decoded += text(e.id, e.formatArgs().data());
  EXPECT_EQ(decoded, direct);
  EXPECT_NE(direct.find("1700000000000389"), std::string::npos); // a time was printed
}

TEST(TransportCodec, DecoderReportsBadInput) {
  static const uint8_t kinds[] = {kLong, kString};
  const std::vector<sonde_record_desc> descs{{kinds, 2}};
  Writer w;
  w.put(0, 50, descs[0], {longArg(-300), stringArg("hello")});
  const std::vector<uint8_t> &bytes = w.bytes;
  SondeFormatArg args[4];
  char scratch[64];
  sonde_decoded_record rec{};

  Reader r(descs);
  // Every cut inside the extended record, then inside the event.
  for (size_t len = 0; len < SONDE_RECORD_EXTENDED_SIZE; ++len)
    EXPECT_EQ(sonde_record_decode(&r.decoder, bytes.data(), len, args, 4, scratch, 64, &rec),
              SONDE_RECORD_TRUNCATED)
        << len;
  const uint8_t *event = bytes.data() + SONDE_RECORD_EXTENDED_SIZE;
  const size_t eventSize = bytes.size() - SONDE_RECORD_EXTENDED_SIZE;
  // An event before any full timestamp.
  EXPECT_EQ(sonde_record_decode(&r.decoder, event, eventSize, args, 4, scratch, 64, &rec),
            SONDE_RECORD_MALFORMED);
  ASSERT_EQ(sonde_record_decode(&r.decoder, bytes.data(), bytes.size(), args, 4, scratch, 64, &rec),
            SONDE_RECORD_CLOCK);
  for (size_t len = 0; len < eventSize; ++len)
    EXPECT_EQ(sonde_record_decode(&r.decoder, event, len, args, 4, scratch, 64, &rec),
              SONDE_RECORD_TRUNCATED)
        << len;
  EXPECT_EQ(sonde_record_decode(&r.decoder, event, eventSize, args, 1, scratch, 64, &rec),
            SONDE_RECORD_NO_ROOM);
  EXPECT_EQ(sonde_record_decode(&r.decoder, event, eventSize, args, 4, scratch, 5, &rec),
            SONDE_RECORD_NO_ROOM);
  // None of the failures moved the stream: the event still decodes with its time.
  ASSERT_EQ(sonde_record_decode(&r.decoder, event, eventSize, args, 4, scratch, 64, &rec),
            SONDE_RECORD_EVENT);
  EXPECT_EQ(rec.reading, 50u);
  EXPECT_EQ(rec.size, eventSize);
  EXPECT_EQ(args[0].i, -300);
  EXPECT_STREQ(args[1].s, "hello");

  const uint8_t unknown[] = {0x05, 0x00, 0x00, 0x00};
  EXPECT_EQ(sonde_record_decode(&r.decoder, unknown, 4, args, 4, scratch, 64, &rec),
            SONDE_RECORD_UNKNOWN_ID);
  std::vector<uint8_t> longVarint{0x00, 0x00, 0x00, 0x00};
  longVarint.insert(longVarint.end(), 10, 0x80);
  longVarint.push_back(0x00);
  EXPECT_EQ(sonde_record_decode(&r.decoder, longVarint.data(), longVarint.size(), args, 4, scratch,
                                64, &rec),
            SONDE_RECORD_MALFORMED);
  const uint8_t extendedWithDelta[12] = {0xff, 0x1f, 0x00, 0x00};
  EXPECT_EQ(sonde_record_decode(&r.decoder, extendedWithDelta, 12, args, 4, scratch, 64, &rec),
            SONDE_RECORD_MALFORMED);
}

TEST(TransportCodec, EncoderRefusesTheReservedId) {
  const sonde_record_desc desc{nullptr, 0};
  sonde_record_stream stream{};
  uint8_t out[SONDE_RECORD_EXTENDED_SIZE + SONDE_RECORD_HEADER_SIZE];
  EXPECT_EQ(sonde_record_encode(&stream, SONDE_RECORD_EXTENDED_ID, 1, &desc, nullptr, out), 0u);
  EXPECT_EQ(stream.started, 0u);
  EXPECT_EQ(sonde_record_encode(&stream, SONDE_RECORD_MAX_ID, 1, &desc, nullptr, out), 16u);
}

} // namespace
