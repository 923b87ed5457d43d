// CtfWriter: traces babeltrace2 reads back (skipped where it is not installed),
// and the writer's refusals.
#include "runtime/transport/CtfWriter.h"

#include "TraceTestSupport.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <utility>
#include <vector>

using namespace sonde::transport;
using namespace sonde::testing;

namespace {

const CtfClock kClock{"monotonic", 1000000000, 1700000000, 0};

std::vector<std::string> lines(const std::string &text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    out.push_back(line);
  return out;
}

// A string field as babeltrace2's pretty printer shows it (for the characters
// these tests use).
std::string shown(const std::string &text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c == '\n' ? std::string("\\n") : std::string(1, c);
  }
  return out + "\"";
}

std::string stamp(uint64_t timestamp) {
  char text[32];
  std::snprintf(text, sizeof text, "[%020" PRIu64 "] ", timestamp);
  return text;
}

const std::vector<CtfField> kOpenFields{{"nr", CtfFieldKind::Signed64},
                                        {"path", CtfFieldKind::String}};
// A TSDL keyword and a leading underscore, which the metadata must protect.
const std::vector<CtfField> kWorkFields{{"string", CtfFieldKind::String},
                                        {"_delta", CtfFieldKind::Signed64}};
// No empty string: babeltrace2 2.0 shows the previous event's value for one
// (https://review.lttng.org/c/babeltrace/+/4528); PacketLayout checks its bytes.
const std::string kPaths[] = {"/etc/hosts", "with spaces and \"quotes\"", "back\\slash",
                              "UTF-8: é ü 日本語 🙂", "two\nlines"};

TEST(TransportCtf, BabeltraceReadsTwoStreamsMergedByTimestamp) {
  TraceDir dir;
  std::string error;
  auto writer = CtfWriter::open(dir.path(), "two streams", kClock, &error);
  ASSERT_TRUE(writer) << error;
  ASSERT_TRUE(writer->defineEvent(0, "open", kOpenFields, &error)) << error;
  ASSERT_TRUE(writer->defineEvent(9, "work \"done\"", kWorkFields, &error)) << error;

  // Stream 1 gets even timestamps, stream 2 odd ones, so the merge has one
  // answer; each stream is written whole before the other. Both name their
  // thread, which every event carries.
  ASSERT_TRUE(writer->setStreamThread(1, 100, 101, &error)) << error;
  ASSERT_TRUE(writer->setStreamThread(2, 100, 102, &error)) << error;
  constexpr int kEvents = 3000;
  std::vector<std::pair<uint64_t, std::string>> expected;
  for (int i = 0; i < kEvents; ++i) {
    uint64_t timestamp = 14 * static_cast<uint64_t>(i);
    const std::string &path = kPaths[i % std::size(kPaths)];
    std::vector<CtfValue> values{int64_t{-i}, path};
    ASSERT_TRUE(writer->write(1, timestamp, 0, values, &error)) << error;
    expected.emplace_back(timestamp, stamp(timestamp) +
                                         "open: { vpid = 100, vtid = 101 }, { nr = " +
                                         std::to_string(-i) + ", path = " + shown(path) + " }");
  }
  for (int i = 0; i < kEvents; ++i) {
    uint64_t timestamp = 22 * static_cast<uint64_t>(i) + 1;
    int64_t delta = i % 3 == 0 ? INT64_MIN + i : int64_t{1000} * i - 77;
    std::string text = "step " + std::to_string(i);
    std::vector<CtfValue> values{text, delta};
    ASSERT_TRUE(writer->write(2, timestamp, 9, values, &error)) << error;
    expected.emplace_back(
        timestamp, stamp(timestamp) + "work \"done\": { vpid = 100, vtid = 102 }, { string = " +
                       shown(text) + ", _delta = " + std::to_string(delta) + " }");
  }
  ASSERT_TRUE(writer->close(&error)) << error;
  // Several fixed-size packets per stream.
  EXPECT_EQ(std::filesystem::file_size(dir.path() + "/stream_1") % CtfStream::kPacketSize, 0u);
  EXPECT_GE(std::filesystem::file_size(dir.path() + "/stream_1"), 2 * CtfStream::kPacketSize);

  Babeltrace read = runBabeltrace(dir.path(), "--clock-cycles");
  if (!read.ran)
    GTEST_SKIP() << "babeltrace2 is not installed";
  ASSERT_EQ(read.status, 0) << read.err;
  EXPECT_EQ(read.err, "");
  std::sort(expected.begin(), expected.end());
  std::vector<std::string> got = lines(read.out);
  // A newline in a string is printed escaped, so one event is one line.
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_EQ(got[i], expected[i].second) << "event " << i;
}

TEST(TransportCtf, BabeltraceReportsDiscardedEvents) {
  TraceDir dir;
  std::string error;
  auto writer = CtfWriter::open(dir.path(), "losses", kClock, &error);
  ASSERT_TRUE(writer) << error;
  ASSERT_TRUE(writer->defineEvent(0, "open", kOpenFields, &error)) << error;
  // Stream 3 loses 42 events while its first packet is open and 8 more at the
  // very end (reported by a packet holding no events); stream 4 loses none.
  for (int i = 0; i < 4000; ++i) {
    std::vector<CtfValue> values{int64_t{i}, "a path of some length"};
    ASSERT_TRUE(writer->write(3, 2 * static_cast<uint64_t>(i), 0, values, &error)) << error;
    ASSERT_TRUE(writer->write(4, 2 * static_cast<uint64_t>(i) + 1, 0, values, &error)) << error;
    if (i == 10)
      ASSERT_TRUE(writer->discarded(3, 40, &error)) << error;
    if (i == 20)
      ASSERT_TRUE(writer->discarded(3, 2, &error)) << error;
  }
  ASSERT_TRUE(writer->discarded(3, 8, &error)) << error;
  ASSERT_TRUE(writer->close(&error)) << error;

  Babeltrace read = runBabeltrace(dir.path(), "--clock-cycles");
  if (!read.ran)
    GTEST_SKIP() << "babeltrace2 is not installed";
  ASSERT_EQ(read.status, 0) << read.err;
  EXPECT_EQ(lines(read.out).size(), 8000u);
  std::vector<std::string> notices = lines(read.err);
  ASSERT_EQ(notices.size(), 2u) << read.err;
  EXPECT_NE(notices[0].find("Tracer discarded 42 events"), std::string::npos) << notices[0];
  EXPECT_NE(notices[0].find("stream ID: 3)"), std::string::npos) << notices[0];
  EXPECT_NE(notices[1].find("Tracer discarded 8 events"), std::string::npos) << notices[1];
  EXPECT_NE(notices[1].find("stream ID: 3)"), std::string::npos) << notices[1];
}

TEST(TransportCtf, BabeltraceReadsAnEventLargerThanAPacket) {
  TraceDir dir;
  std::string error;
  auto writer = CtfWriter::open(dir.path(), "large", kClock, &error);
  ASSERT_TRUE(writer) << error;
  ASSERT_TRUE(writer->defineEvent(0, "open", kOpenFields, &error)) << error;
  std::string large(CtfStream::kPacketSize + 1000, 'x');
  std::vector<CtfValue> small{int64_t{1}, "small"};
  std::vector<CtfValue> big{int64_t{2}, large};
  ASSERT_TRUE(writer->write(5, 10, 0, small, &error)) << error;
  ASSERT_TRUE(writer->write(5, 20, 0, big, &error)) << error;
  ASSERT_TRUE(writer->write(5, 30, 0, small, &error)) << error;
  ASSERT_TRUE(writer->close(&error)) << error;

  Babeltrace read = runBabeltrace(dir.path(), "--clock-cycles");
  if (!read.ran)
    GTEST_SKIP() << "babeltrace2 is not installed";
  ASSERT_EQ(read.status, 0) << read.err;
  // A stream whose thread was never named: zeros.
  const std::string open = "open: { vpid = 0, vtid = 0 }, ";
  EXPECT_EQ(read.out, stamp(10) + open + "{ nr = 1, path = \"small\" }\n" + stamp(20) + open +
                          "{ nr = 2, path = " + shown(large) + " }\n" + stamp(30) + open +
                          "{ nr = 1, path = \"small\" }\n");
}

TEST(TransportCtf, StringsEndAtTheirFirstNul) {
  TraceDir dir;
  std::string error;
  auto writer = CtfWriter::open(dir.path(), "nul", kClock, &error);
  ASSERT_TRUE(writer) << error;
  ASSERT_TRUE(writer->defineEvent(0, "open", kOpenFields, &error)) << error;
  std::vector<CtfValue> values{int64_t{-5}, std::string_view("kept\0dropped", 12)};
  ASSERT_TRUE(writer->write(0, 1, 0, values, &error)) << error;
  ASSERT_TRUE(writer->close(&error)) << error;

  Babeltrace read = runBabeltrace(dir.path(), "--clock-cycles");
  if (!read.ran)
    GTEST_SKIP() << "babeltrace2 is not installed";
  EXPECT_EQ(read.out, stamp(1) + "open: { vpid = 0, vtid = 0 }, { nr = -5, path = \"kept\" }\n")
      << read.err;
}

TEST(TransportCtf, BabeltraceAppliesTheClockFrequencyAndOffset) {
  TraceDir dir;
  std::string error;
  // 2 GHz; cycle 0 is half a second after 1700000000 s.
  auto writer =
      CtfWriter::open(dir.path(), "clock", {"tsc", 2000000000, 1700000000, 1000000000}, &error);
  ASSERT_TRUE(writer) << error;
  ASSERT_TRUE(writer->defineEvent(0, "tick", {}, &error)) << error;
  ASSERT_TRUE(writer->write(0, 3000000000, 0, {}, &error)) << error;
  ASSERT_TRUE(writer->write(0, 3000000003, 0, {}, &error)) << error;
  ASSERT_TRUE(writer->close(&error)) << error;

  Babeltrace read = runBabeltrace(dir.path(), "--clock-seconds");
  if (!read.ran)
    GTEST_SKIP() << "babeltrace2 is not installed";
  EXPECT_EQ(read.out, "[1700000002.000000000] tick: { vpid = 0, vtid = 0 }\n"
                      "[1700000002.000000001] tick: { vpid = 0, vtid = 0 }\n")
      << read.err;
}

template <typename T> T at(const std::string &bytes, size_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof value);
  return value;
}

// The bytes CtfStream writes, against the layout CtfMetadata declares.
TEST(TransportCtf, PacketLayout) {
  TraceDir dir;
  std::string error;
  auto writer = CtfWriter::open(dir.path(), "layout", kClock, &error);
  ASSERT_TRUE(writer) << error;
  ASSERT_TRUE(writer->defineEvent(6, "open", kOpenFields, &error)) << error;
  std::vector<CtfValue> first{int64_t{-2}, ""};
  std::vector<CtfValue> second{int64_t{3}, "ab"};
  ASSERT_TRUE(writer->setStreamThread(12, 7, -9, &error)) << error;
  ASSERT_TRUE(writer->write(12, 100, 6, first, &error)) << error;
  ASSERT_TRUE(writer->write(12, 250, 6, second, &error)) << error;
  ASSERT_TRUE(writer->discarded(12, 3, &error)) << error;
  ASSERT_TRUE(writer->close(&error)) << error;

  std::string metadata = readFile(dir.path() + "/metadata");
  size_t uuidAt = metadata.find("uuid = \"");
  ASSERT_NE(uuidAt, std::string::npos);
  std::string uuidText = metadata.substr(uuidAt + 8, 36);
  uuidText.erase(std::remove(uuidText.begin(), uuidText.end(), '-'), uuidText.end());

  // A loss in the first packet: an empty packet with a zero count comes first.
  std::string bytes = readFile(dir.path() + "/stream_12");
  ASSERT_EQ(bytes.size(), 80 + CtfStream::kPacketSize);
  for (size_t packet : {size_t{0}, size_t{80}}) {
    EXPECT_EQ(at<uint32_t>(bytes, packet), 0xC1FC1FC1u);
    std::string uuid;
    for (size_t i = 0; i < 16; ++i) {
      char digits[3];
      std::snprintf(digits, sizeof digits, "%02x", static_cast<uint8_t>(bytes[packet + 4 + i]));
      uuid += digits;
    }
    EXPECT_EQ(uuid, uuidText);
    EXPECT_EQ(at<uint32_t>(bytes, packet + 20), 0u);  // stream class id
    EXPECT_EQ(at<uint64_t>(bytes, packet + 24), 12u); // stream instance id
  }
  EXPECT_EQ(at<uint64_t>(bytes, 32), 100u);    // timestamp_begin
  EXPECT_EQ(at<uint64_t>(bytes, 40), 100u);    // timestamp_end
  EXPECT_EQ(at<uint64_t>(bytes, 48), 80u * 8); // content_size (bits)
  EXPECT_EQ(at<uint64_t>(bytes, 56), 80u * 8); // packet_size (bits)
  EXPECT_EQ(at<uint64_t>(bytes, 64), 0u);      // events_discarded
  EXPECT_EQ(at<uint64_t>(bytes, 72), 0u);      // packet_seq_num

  const size_t p = 80;
  const size_t events = 2 * (4 + 8 + 4 + 4 + 8) + 1 + 3;
  EXPECT_EQ(at<uint64_t>(bytes, p + 32), 100u);
  EXPECT_EQ(at<uint64_t>(bytes, p + 40), 250u);
  EXPECT_EQ(at<uint64_t>(bytes, p + 48), (80 + events) * 8);
  EXPECT_EQ(at<uint64_t>(bytes, p + 56), uint64_t{CtfStream::kPacketSize} * 8);
  EXPECT_EQ(at<uint64_t>(bytes, p + 64), 3u);
  EXPECT_EQ(at<uint64_t>(bytes, p + 72), 1u);
  size_t e = p + 80;
  EXPECT_EQ(at<uint32_t>(bytes, e), 6u);
  EXPECT_EQ(at<uint64_t>(bytes, e + 4), 100u);
  EXPECT_EQ(at<int32_t>(bytes, e + 12), 7);  // vpid
  EXPECT_EQ(at<int32_t>(bytes, e + 16), -9); // vtid
  EXPECT_EQ(at<int64_t>(bytes, e + 20), -2);
  EXPECT_EQ(bytes[e + 28], '\0');
  e += 29;
  EXPECT_EQ(at<uint32_t>(bytes, e), 6u);
  EXPECT_EQ(at<uint64_t>(bytes, e + 4), 250u);
  EXPECT_EQ(at<int32_t>(bytes, e + 12), 7);
  EXPECT_EQ(at<int64_t>(bytes, e + 20), 3);
  EXPECT_EQ(bytes.substr(e + 28, 3), std::string("ab\0", 3));
  EXPECT_EQ(bytes.find_first_not_of('\0', e + 31), std::string::npos); // zero padding
}

TEST(TransportCtf, MetadataDeclaresTheClockAndEscapesNames) {
  CtfTraceDescription trace{{}, "t\"n", {"tsc", 2400000000, 1700000000, 12345}, {}};
  trace.events.push_back({7, "a\nb\\\"c", {{"event", CtfFieldKind::String}}});
  std::string text = ctfMetadataText(trace);
  EXPECT_EQ(text.rfind("/* CTF 1.8 */\n", 0), 0u);
  EXPECT_NE(text.find("freq = 2400000000;"), std::string::npos);
  EXPECT_NE(text.find("offset_s = 1700000000;"), std::string::npos);
  EXPECT_NE(text.find("offset = 12345;"), std::string::npos);
  EXPECT_NE(text.find("map = clock.tsc.value;"), std::string::npos);
  EXPECT_NE(text.find("trace_name = \"t\\\"n\";"), std::string::npos);
  EXPECT_NE(text.find("name = \"a\\012b\\\\\\\"c\";"), std::string::npos);
  EXPECT_NE(text.find("string _event;"), std::string::npos);
  EXPECT_NE(text.find("event.context := struct {\n\t\tint32_t _vpid;\n\t\tint32_t _vtid;"),
            std::string::npos);
}

TEST(TransportCtf, RefusesWhatWouldMakeABadTrace) {
  TraceDir dir;
  std::string error;
  EXPECT_FALSE(CtfWriter::open(dir.path() + "/a", "t", {"not an identifier", 1, 0, 0}, &error));
  auto writer = CtfWriter::open(dir.path() + "/a", "t", kClock, &error);
  ASSERT_TRUE(writer) << error;
  EXPECT_FALSE(CtfWriter::open(dir.path() + "/a", "t", kClock, &error));
  EXPECT_NE(error.find("is not empty"), std::string::npos) << error;

  ASSERT_TRUE(writer->defineEvent(0, "open", kOpenFields, &error)) << error;
  EXPECT_FALSE(writer->defineEvent(0, "again", kOpenFields, &error));
  EXPECT_FALSE(writer->defineEvent(1, "bad", {{"1st", CtfFieldKind::String}}, &error));
  EXPECT_FALSE(writer->defineEvent(
      2, "twice", {{"x", CtfFieldKind::String}, {"x", CtfFieldKind::Signed64}}, &error));

  std::vector<CtfValue> good{int64_t{1}, "p"};
  std::vector<CtfValue> swapped{"p", int64_t{1}};
  std::vector<CtfValue> short_{int64_t{1}};
  EXPECT_FALSE(writer->write(0, 5, 1, good, &error)); // undefined event
  EXPECT_FALSE(writer->write(0, 5, 0, swapped, &error));
  EXPECT_FALSE(writer->write(0, 5, 0, short_, &error));
  ASSERT_TRUE(writer->write(0, 5, 0, good, &error)) << error;
  EXPECT_FALSE(writer->write(0, 4, 0, good, &error)); // backwards in one stream
  EXPECT_NE(error.find("is before"), std::string::npos) << error;
  EXPECT_TRUE(writer->write(1, 4, 0, good, &error)) << error; // another stream may
  ASSERT_TRUE(writer->close(&error)) << error;
  EXPECT_FALSE(writer->write(0, 6, 0, good, &error));

  Babeltrace read = runBabeltrace(dir.path() + "/a", "--clock-cycles");
  if (!read.ran)
    GTEST_SKIP() << "babeltrace2 is not installed";
  const std::string event = "open: { vpid = 0, vtid = 0 }, { nr = 1, path = \"p\" }\n";
  EXPECT_EQ(read.out, stamp(4) + event + stamp(5) + event)
      << read.err;
}

} // namespace
