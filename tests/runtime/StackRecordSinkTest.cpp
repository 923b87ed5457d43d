// The consumer's symbolization of stack records: addresses resolved against
// the object list the same stream sent, other records passed through.
#include "runtime/session/StackRecordSink.h"
#include "runtime/session/TraceSchema.h"
#include "runtime/symbols/AddressSymbol.h"
#include "runtime/symbols/LoadedObjects.h"

#include <gtest/gtest.h>

#include <cinttypes>
#include <cstdio>
#include <cstring>

namespace sonde::session {
namespace {

class CapturingSink final : public RecordSink {
public:
  std::vector<std::pair<uint32_t, std::string>> seen; // id, first string argument or ""
  void event(const TraceEvent &e) override {
    bool text = e.id == TraceSchema::kTextId;
    seen.emplace_back(e.id, text ? std::string(e.args[0].s) : std::string());
  }
  bool close(std::string *) override { return true; }
};

__attribute__((noinline)) int stackRecordTarget(int x) { return x * 5 + 2; }

TraceEvent eventOf(uint64_t stream, uint32_t id, const SondeFormatArg *args) {
  TraceEvent e;
  e.origin.stream = stream;
  e.id = id;
  e.args = args;
  return e;
}

TEST(StackRecordSink, SymbolizesWithTheStreamsObjects) {
  std::optional<TraceSchema> schema = TraceSchema::build({{"n=%d\n", "begin", 0}}, nullptr);
  ASSERT_TRUE(schema);
  auto capture = std::make_unique<CapturingSink>();
  CapturingSink &seen = *capture;
  StackRecordSink sink(*schema, std::move(capture));

  std::string objects = symbols::serializeObjects(symbols::loadedObjectsOfThisProcess());
  SondeFormatArg objectArg{};
  objectArg.s = objects.c_str();
  sink.event(eventOf(1, TraceSchema::kObjectsId, &objectArg));

  char stack[64];
  std::snprintf(stack, sizeof stack, "0x%" PRIxPTR " ",
                reinterpret_cast<uintptr_t>(&stackRecordTarget) + 2);
  SondeFormatArg stackArgs[2] = {};
  stackArgs[0].i = static_cast<int64_t>(symbols::SymbolStyle::Brief);
  stackArgs[1].s = stack;
  sink.event(eventOf(1, TraceSchema::kUserStackId, stackArgs));
  // Stream 2 sent no objects: the address stays hex.
  sink.event(eventOf(2, TraceSchema::kUserStackId, stackArgs));
  SondeFormatArg number{};
  number.i = 4;
  sink.event(eventOf(1, 0, &number));

  ASSERT_EQ(seen.seen.size(), 3u) << "the object list itself prints nothing";
  EXPECT_EQ(seen.seen[0].first, TraceSchema::kTextId);
  EXPECT_NE(seen.seen[0].second.find("stackRecordTarget"), std::string::npos)
      << seen.seen[0].second;
  EXPECT_EQ(seen.seen[0].second.substr(seen.seen[0].second.size() - 5), "+0x2\n");
  EXPECT_EQ(seen.seen[1].second, std::string(stack, std::strlen(stack) - 1) + "\n");
  EXPECT_EQ(seen.seen[2].first, 0u);
}

} // namespace
} // namespace sonde::session
