// CtfRecordSink: a trace babeltrace2 reads back (skipped where it is not
// installed) with event classes named after probe points, wall-clock times,
// text records, two streams and a loss; the classes it defines and its names.
#include "runtime/session/CtfRecordSink.h"

#include "TraceTestSupport.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace sonde::session;
using namespace sonde::testing;

namespace {

// Readings count nanoseconds from 2024-11-22 04:33:20 UTC, reading 1000.
const sonde_trace_clock kClock{1000, 5, 1732250000000000000, 1, 0, SONDE_CLOCK_MONOTONIC};
const std::string kProbe = "process(\"a\").mark(\"x\")";

TraceSchema makeSchema() {
  std::string error;
  auto schema = TraceSchema::build({{"pid=%d comm=%s\n", kProbe},
                                    {"%s(%d)", ""},
                                    {"n=%d\n", kProbe},
                                    {"unused %d\n", kProbe},
                                    {"again=%d string=%s\n", kProbe}},
                                   &error);
  EXPECT_TRUE(schema) << error;
  return std::move(*schema);
}

void feed(RecordSink &sink, const TraceSchema &schema, RecordOrigin origin, uint64_t reading,
          uint32_t id, const std::vector<SondeFormatArg> &args) {
  ASSERT_EQ(args.size(), schema.type(id)->kinds.size());
  sink.event(TraceEvent{origin, reading, id, schema.type(id), args.data()});
}

TEST(RecordSinkCtf, BabeltraceReadsEventsTextAndLosses) {
  TraceSchema schema = makeSchema();
  TraceDir dir;
  std::string error;
  auto sink = CtfRecordSink::open(dir.path(), schema, kClock, &error);
  ASSERT_TRUE(sink) << error;
  const RecordOrigin a{7, 42, 43}, b{9, 42, 44};
  const uint32_t text = TraceSchema::kTextId;
  feed(*sink, schema, a, 1100, 0, {num(42), str("abc")});
  feed(*sink, schema, b, 1200, 1, {str("f"), num(12)});
  feed(*sink, schema, a, 1300, text, {str("hello \"world\"\n")});
  feed(*sink, schema, a, 1250, 2, {num(5)}); // back in time: kept at 1300
  feed(*sink, schema, b, 1400, 0, {num(-7), str("two\nlines")});
  sink->lost(b, 5);
  feed(*sink, schema, a, 1500, 4, {num(-1), str("x")});
  feed(*sink, schema, b, 1600, text, {str("bye")});
  // Stream 9's ring passes to another thread: its later events carry that one.
  feed(*sink, schema, RecordOrigin{9, 42, 45}, 1700, 2, {num(6)});
  sink->flush();
  ASSERT_TRUE(sink->close(&error)) << error;

  // Only the classes seen, ids as the schema's: format 3 never occurred.
  std::string metadata = readFile(dir.path() + "/metadata");
  EXPECT_EQ(metadata.find("id = 3;"), std::string::npos);
  EXPECT_NE(metadata.find("id = " + std::to_string(text) + ";"), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(dir.path() + "/stream_7"));
  EXPECT_TRUE(std::filesystem::exists(dir.path() + "/stream_9"));

  Babeltrace read = runBabeltrace(dir.path(), "--clock-seconds");
  if (!read.ran)
    GTEST_SKIP() << "babeltrace2 is not installed";
  ASSERT_EQ(read.status, 0) << read.err;
  // Each event carries its stream's process and thread (vpid, vtid).
  const std::string threadA = "{ vpid = 42, vtid = 43 }, ", threadB = "{ vpid = 42, vtid = 44 }, ";
  EXPECT_EQ(
      read.out,
      "[1732250000.000000100] " + kProbe + ": " + threadA +
          "{ pid = 42, comm = \"abc\" }\n"
          "[1732250000.000000200] printf_1: " +
          threadB + "{ arg1 = \"f\", arg2 = 12 }\n" + "[1732250000.000000300] text: " + threadA +
          "{ text = \"hello \\\"world\\\"\\n\" }\n"
          "[1732250000.000000300] " +
          kProbe + " #2: " + threadA + "{ n = 5 }\n" + "[1732250000.000000400] " + kProbe + ": " +
          threadB + "{ pid = -7, comm = \"two\\nlines\" }\n" + "[1732250000.000000500] " + kProbe +
          " #4: " + threadA + "{ again = -1, string = \"x\" }\n" +
          "[1732250000.000000600] text: " + threadB + "{ text = \"bye\" }\n" +
          "[1732250000.000000700] " + kProbe + " #2: { vpid = 42, vtid = 45 }, { n = 6 }\n");
  EXPECT_NE(read.err.find("Tracer discarded 5 events"), std::string::npos) << read.err;
  EXPECT_NE(read.err.find("stream ID: 9)"), std::string::npos) << read.err;
  EXPECT_EQ(read.err.find("stream ID: 7)"), std::string::npos) << read.err;
}

TEST(RecordSinkCtf, NamesEventClassesAfterProbePoints) {
  TraceSchema schema = makeSchema();
  TraceDir dir;
  std::string error;
  auto sink = CtfRecordSink::open(dir.path(), schema, kClock, &error);
  ASSERT_TRUE(sink) << error;
  EXPECT_EQ(sink->eventName(0), kProbe);
  EXPECT_EQ(sink->eventName(1), "printf_1");
  EXPECT_EQ(sink->eventName(2), kProbe + " #2");
  EXPECT_EQ(sink->eventName(3), kProbe + " #3");
  EXPECT_EQ(sink->eventName(4), kProbe + " #4");
  EXPECT_EQ(sink->eventName(TraceSchema::kTextId), "text");
  ASSERT_TRUE(sink->close(&error)) << error;
}

TEST(RecordSinkCtf, RefusesADirectoryInUse) {
  TraceSchema schema = makeSchema();
  TraceDir dir;
  std::ofstream(dir.path() + "/stale") << "x";
  std::string error;
  EXPECT_FALSE(CtfRecordSink::open(dir.path(), schema, kClock, &error));
  EXPECT_NE(error.find("is not empty"), std::string::npos) << error;
}

} // namespace
