// printf records appended by generated code itself (InlineRecordAppend): a
// compiled handler writes into a cursor over a plain buffer, and the bytes
// decode, with the runtime's decoder, to the values and times printed.
#include "CodegenTestSupport.h"

#include "runtime/transport/RecordCodec.h"
#include "runtime/transport/RecordCursor.h"

#include <gtest/gtest.h>

#include <vector>

namespace sonde::test {
namespace {

// x runs through values of every varint width and both signs (wrapping).
const char *const kScript = "global x = 5\n"
                            "probe begin {\n"
                            "  for (i = 0; i < 40; i++) {\n"
                            "    printf(\"%d %d\\n\", x, -x)\n"
                            "    printf(\"%d at %d\\n\", i, gettimeofday_ns())\n"
                            "    x = x * -77 + 3\n"
                            "  }\n"
                            "}\n";

struct Decoded {
  uint32_t id;
  uint64_t reading;
  std::vector<int64_t> longs;
};

std::vector<Decoded> decodeAll(const uint8_t *data, size_t size) {
  const uint8_t twoLongs[] = {SONDE_RECORD_ARG_LONG, SONDE_RECORD_ARG_LONG};
  const uint8_t longAndTime[] = {SONDE_RECORD_ARG_LONG, SONDE_RECORD_ARG_TIME};
  sonde_record_desc descs[] = {{twoLongs, 2}, {longAndTime, 2}};
  sonde_trace_clock clock{};
  clock.mult = 1; // readings as they are
  sonde_record_decoder decoder{};
  decoder.clock = &clock;
  decoder.descs = descs;
  decoder.desc_count = 2;
  std::vector<Decoded> out;
  SondeFormatArg args[4];
  char scratch[64];
  for (size_t at = 0; at < size;) {
    sonde_decoded_record r{};
    int st =
        sonde_record_decode(&decoder, data + at, size - at, args, 4, scratch, sizeof scratch, &r);
    if (st != SONDE_RECORD_EVENT && st != SONDE_RECORD_CLOCK) {
      ADD_FAILURE() << "status " << st << " at byte " << at;
      break;
    }
    if (st == SONDE_RECORD_EVENT)
      out.push_back({r.id, r.reading, {args[0].i, args[1].i}});
    at += r.size;
  }
  return out;
}

TEST(CodegenRecordAppend, HandlerAppendsRecordsThatDecodeToItsValuesAndTimes) {
  auto module = CompiledModule::compile(kScript);
  ASSERT_TRUE(module->ok()) << module->diagnostics();
  HandlerHarness h(*module);
  h.initialize();

  std::vector<uint8_t> buffer(16384, 0xee);
  uint32_t used = 0, records = 0;
  sonde_record_cursor cursor{};
  cursor.base = cursor.next = buffer.data();
  cursor.limit = buffer.data() + buffer.size();
  cursor.used = &used;
  cursor.records = &records;
  cursor.stream.started = 1; // last = 0: the first record needs a full timestamp
  h.appendRecordsTo(&cursor);

  uint64_t before = __builtin_ia32_rdtsc();
  ASSERT_EQ(h.run(0), 0);
  uint64_t after = __builtin_ia32_rdtsc();

  EXPECT_EQ(records, 80u);
  EXPECT_EQ(cursor.next, buffer.data() + used);
  EXPECT_EQ(buffer[used], 0xee) << "wrote past the committed bytes";
  std::vector<Decoded> decoded = decodeAll(buffer.data(), used);
  ASSERT_EQ(decoded.size(), 80u);
  int64_t x = 5;
  uint64_t previous = before;
  for (int i = 0; i < 40; ++i) {
    const Decoded &values = decoded[2 * i], &time = decoded[2 * i + 1];
    EXPECT_EQ(values.id, 0u);
    EXPECT_EQ(values.longs[0], x) << "iteration " << i;
    EXPECT_EQ(values.longs[1], -x) << "iteration " << i;
    EXPECT_EQ(time.id, 1u);
    EXPECT_EQ(time.longs[0], i);
    // The time argument decodes as the record's own reading (mult 1, shift 0).
    EXPECT_EQ(static_cast<uint64_t>(time.longs[1]), time.reading);
    for (const Decoded *d : {&values, &time}) {
      EXPECT_GE(d->reading, previous) << "iteration " << i;
      previous = d->reading;
    }
    x = static_cast<int64_t>(static_cast<uint64_t>(x) * static_cast<uint64_t>(-77) + 3);
  }
  EXPECT_LE(previous, after);
  EXPECT_EQ(cursor.stream.last, previous);
}

TEST(CodegenRecordAppend, OnlyPrintfsOfNumbersAppendInline) {
  GeneratedIr numbers = generateIr("probe begin { printf(\"%d %x\\n\", 1, gettimeofday_ns()) }");
  ASSERT_TRUE(numbers.ok) << numbers.diagnostics;
  EXPECT_NE(numbers.ir.find("record.append"), std::string::npos);
  EXPECT_NE(numbers.ir.find("llvm.readcyclecounter"), std::string::npos);
  GeneratedIr strings = generateIr("probe begin { printf(\"%s %d\\n\", \"a\", 1) }");
  ASSERT_TRUE(strings.ok) << strings.diagnostics;
  EXPECT_EQ(strings.ir.find("record.append"), std::string::npos);
  EXPECT_NE(strings.ir.find("sonde_out_printf"), std::string::npos);
  GeneratedIr memory = generateIr("probe begin { printf(\"%d %m\\n\", 1, 0) }");
  ASSERT_TRUE(memory.ok) << memory.diagnostics;
  EXPECT_EQ(memory.ir.find("record.append"), std::string::npos);
}

// The line SONDE_RECORD_PREFETCH_DISTANCE bytes past the cursor is prefetched
// for writing (rw = 1) before the record is written.
TEST(CodegenRecordAppend, AppendPrefetchesALineAheadForWriting) {
  GeneratedIr ir = generateIr("probe begin { printf(\"%d\\n\", 1) }");
  ASSERT_TRUE(ir.ok) << ir.diagnostics;
  std::string ahead =
      "getelementptr inbounds i8, ptr %next, i64 " + std::to_string(SONDE_RECORD_PREFETCH_DISTANCE);
  size_t at = ir.ir.find(ahead);
  ASSERT_NE(at, std::string::npos) << ir.ir;
  size_t prefetch = ir.ir.find("call void @llvm.prefetch.p0(ptr", at);
  ASSERT_NE(prefetch, std::string::npos) << ir.ir;
  std::string call = ir.ir.substr(prefetch, ir.ir.find('\n', prefetch) - prefetch);
  EXPECT_NE(call.find(", i32 1, i32 3, i32 1)"), std::string::npos) << call;
  EXPECT_LT(prefetch, ir.ir.find("store i32 %header")) << "prefetched after the record's stores";
}

} // namespace
} // namespace sonde::test
