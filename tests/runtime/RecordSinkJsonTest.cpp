// JsonRecordSink: the exact lines for events, text records and losses, string
// escaping (always valid JSON and UTF-8), and when output is written.
#include "runtime/session/JsonRecordSink.h"

#include "TraceTestSupport.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

using namespace sonde::session;
using namespace sonde::testing;

namespace {

// Readings count nanoseconds from 2024-11-22 04:33:20 UTC, reading 1000.
const sonde_trace_clock kClock{1000, 5, 1732250000000000000, 1, 0, SONDE_CLOCK_MONOTONIC};

TraceSchema makeSchema() {
  std::string error;
  auto schema = TraceSchema::build({{"pid=%d comm=%s\n", "process(\"a\").mark(\"x\")"},
                                    {"%s(%d)", ""},
                                    {"q=%s\n", "process(\"/x y\").mark(\"q\\\"\")"}},
                                   &error);
  EXPECT_TRUE(schema) << error;
  return std::move(*schema);
}

// A sink whose output collects in `out`, one string per write call.
struct Collected {
  std::vector<std::string> writes;
  std::string all() const {
    std::string text;
    for (const std::string &w : writes)
      text += w;
    return text;
  }
};

JsonRecordSink collectingSink(Collected &out) {
  return JsonRecordSink(kClock, [&out](const char *data, size_t size) {
    out.writes.emplace_back(data, size);
    return size;
  });
}

TraceEvent eventOf(const TraceSchema &schema, uint32_t id, uint64_t reading,
                   const std::vector<SondeFormatArg> &args) {
  return TraceEvent{{7, 42, 43}, reading, id, schema.type(id), args.data()};
}

// What `python3 -c CODE` prints for `input` on its stdin ("" without python3).
std::string python(const std::string &code, const std::string &input) {
  if (std::system("command -v python3 >/dev/null 2>&1") != 0)
    return "";
  char pattern[] = "/tmp/sonde-json-XXXXXX";
  int fd = ::mkstemp(pattern);
  std::string path = pattern;
  ::close(fd);
  std::ofstream(path, std::ios::binary) << input;
  std::string output =
      commandOutput("PYTHONIOENCODING=utf-8 python3 -c '" + code + "' < '" + path + "' 2>&1");
  std::filesystem::remove(path);
  return output;
}

// Strict UTF-8 and JSON: each line parses, and is one object.
const char kParseLines[] = "import json,sys\n"
                           "lines = sys.stdin.buffer.read().decode(\"utf-8\").splitlines()\n"
                           "print(sum(isinstance(json.loads(l), dict) for l in lines))";

TEST(RecordSinkJson, EventTextAndLossLines) {
  TraceSchema schema = makeSchema();
  Collected out;
  JsonRecordSink sink = collectingSink(out);
  std::vector<SondeFormatArg> first{num(-9223372036854775807 - 1), str("abc")};
  std::vector<SondeFormatArg> second{str("f"), num(12)};
  std::vector<SondeFormatArg> text{str("hello\n")};
  std::vector<SondeFormatArg> quoted{str("")};
  sink.event(eventOf(schema, 0, 1123, first));
  sink.event(eventOf(schema, 1, 999, second)); // before the reference point
  sink.event(eventOf(schema, TraceSchema::kTextId, 2000, text));
  sink.lost({7, 42, 43}, 17);
  sink.event(eventOf(schema, 2, 1000, quoted));
  EXPECT_TRUE(out.writes.empty()); // nothing before a flush
  std::string error;
  ASSERT_TRUE(sink.close(&error)) << error;
  ASSERT_EQ(out.writes.size(), 1u);
  const std::string expected =
      "{\"time_ns\":1732250000000000123,\"pid\":42,\"tid\":43,"
      "\"probe\":\"process(\\\"a\\\").mark(\\\"x\\\")\",\"format\":\"pid=%d comm=%s\\n\","
      "\"fields\":{\"pid\":-9223372036854775808,\"comm\":\"abc\"}}\n"
      "{\"time_ns\":1732249999999999999,\"pid\":42,\"tid\":43,\"probe\":\"\","
      "\"format\":\"%s(%d)\",\"fields\":{\"arg1\":\"f\",\"arg2\":12}}\n"
      "{\"time_ns\":1732250000000001000,\"pid\":42,\"tid\":43,\"text\":\"hello\\n\"}\n"
      "{\"lost\":17,\"pid\":42,\"tid\":43}\n"
      "{\"time_ns\":1732250000000000000,\"pid\":42,\"tid\":43,"
      "\"probe\":\"process(\\\"/x y\\\").mark(\\\"q\\\\\\\"\\\")\",\"format\":\"q=%s\\n\","
      "\"fields\":{\"q\":\"\"}}\n";
  EXPECT_EQ(out.all(), expected);
  std::string parsed = python(kParseLines, out.all());
  if (!parsed.empty())
    EXPECT_EQ(parsed, "5\n");
}

TEST(RecordSinkJson, TimeArgumentsAreNumbers) {
  // Record times (gettimeofday_ns() and friends) decode as longs.
  TraceEventType type;
  type.source = "begin";
  type.format = "at %d\n";
  type.kinds = {SONDE_RECORD_ARG_TIME};
  type.fields = {"at"};
  std::vector<SondeFormatArg> args{num(1732250000000000042)};
  Collected out;
  JsonRecordSink sink = collectingSink(out);
  sink.event(TraceEvent{{1, 2, 3}, 1000, 0, &type, args.data()});
  sink.flush();
  EXPECT_EQ(out.all(), "{\"time_ns\":1732250000000000000,\"pid\":2,\"tid\":3,\"probe\":\"begin\","
                       "\"format\":\"at %d\\n\",\"fields\":{\"at\":1732250000000000042}}\n");
}

std::string jsonString(std::string_view text) {
  std::string out;
  appendJsonString(out, text);
  return out;
}

TEST(RecordSinkJson, EscapesControlCharactersQuotesAndBackslashes) {
  EXPECT_EQ(jsonString(""), "\"\"");
  EXPECT_EQ(jsonString("a\"b\\c/d"), "\"a\\\"b\\\\c/d\"");
  EXPECT_EQ(jsonString("l1\nl2\tt\rr"), "\"l1\\nl2\\tt\\rr\"");
  EXPECT_EQ(jsonString(std::string_view("\x01\x08\x0c\x1f\x7f \x00z", 8)),
            "\"\\u0001\\u0008\\u000c\\u001f\\u007f \\u0000z\"");
}

TEST(RecordSinkJson, KeepsValidUtf8AndEscapesEveryOtherByte) {
  EXPECT_EQ(jsonString("é ü 日本語 🙂 \U0010FFFF \u07FF \uFFFD"),
            "\"é ü 日本語 🙂 \U0010FFFF \u07FF \uFFFD\"");
  // A stray continuation byte, a bad lead byte, a lead byte without its
  // continuation, an overlong form, a surrogate, beyond U+10FFFF, a truncated
  // sequence at the end: each byte escaped alone.
  EXPECT_EQ(jsonString("\x80 \xff \xc3( \xc0\xaf \xe0\x80\x80 \xed\xa0\x80 \xf4\x90\x80\x80 "
                       "\xf5\x80 x\xe6\x97"),
            "\"\\u0080 \\u00ff \\u00c3( \\u00c0\\u00af \\u00e0\\u0080\\u0080 "
            "\\u00ed\\u00a0\\u0080 \\u00f4\\u0090\\u0080\\u0080 \\u00f5\\u0080 x\\u00e6\\u0097\"");
}

TEST(RecordSinkJson, FieldsWithAnyBytesStayValidJson) {
  TraceSchema schema = makeSchema();
  Collected out;
  JsonRecordSink sink = collectingSink(out);
  std::string every;
  for (int byte = 1; byte < 256; ++byte)
    every += static_cast<char>(byte);
  std::vector<SondeFormatArg> args{num(1), str(every.c_str())};
  std::vector<SondeFormatArg> text{str("\xe6\x97\xa5\xe6 \"\\\n")};
  sink.event(eventOf(schema, 0, 1000, args));
  sink.event(eventOf(schema, TraceSchema::kTextId, 1000, text));
  sink.flush();
  std::string parsed = python(std::string(kParseLines) + "\n"
                                                         "d = json.loads(lines[0])[\"fields\"]\n"
                                                         "print(len(d[\"comm\"]), d[\"pid\"])\n"
                                                         "print(json.loads(lines[1])[\"text\"])",
                              out.all());
  if (parsed.empty())
    GTEST_SKIP() << "python3 is not installed";
  // Bytes 1-255 come back as 255 characters: 0x80-0xff are no UTF-8 on their own.
  EXPECT_EQ(parsed, "2\n255 1\n\u65e5\u00e6 \"\\\n\n");
}

TEST(RecordSinkJson, WritesWholeLinesInLargePieces) {
  TraceSchema schema = makeSchema();
  Collected out;
  JsonRecordSink sink = collectingSink(out);
  std::vector<SondeFormatArg> args{num(5), str("a name of some length")};
  constexpr int kEvents = 5000;
  for (int i = 0; i < kEvents; ++i)
    sink.event(eventOf(schema, 0, 1000 + static_cast<uint64_t>(i), args));
  // Written without a flush once a buffer's worth is pending.
  ASSERT_FALSE(out.writes.empty());
  for (const std::string &w : out.writes) {
    EXPECT_GE(w.size(), RecordTextBuffer::kFlushSize);
    EXPECT_EQ(w.back(), '\n');
  }
  size_t written = out.writes.size();
  sink.flush();
  EXPECT_EQ(out.writes.size(), written + 1);
  sink.flush(); // nothing pending: no empty write
  std::string error;
  ASSERT_TRUE(sink.close(&error)) << error;
  EXPECT_EQ(out.writes.size(), written + 1);
  std::string all = out.all();
  EXPECT_EQ(static_cast<int>(std::count(all.begin(), all.end(), '\n')), kEvents);
  EXPECT_NE(all.find("\"time_ns\":1732250000000004999,"), std::string::npos);
}

} // namespace
