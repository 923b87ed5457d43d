// Records a traced process sent that no producer of ours writes: the decoder
// refuses every field it cannot trust, and the consumer's sinks note the damage
// (naming the stream) instead of printing, or working without bound on, it.
#include "runtime/session/RecordStreams.h"
#include "runtime/session/StackRecordSink.h"
#include "runtime/session/TraceSchema.h"
#include "runtime/transport/RecordCodec.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sonde::session {
namespace {

class CountingSink final : public RecordSink {
public:
  std::vector<uint32_t> ids;
  void event(const TraceEvent &e) override { ids.push_back(e.id); }
  bool close(std::string *) override { return true; }
};

TraceSchema schema() {
  std::optional<TraceSchema> s = TraceSchema::build({{"n=%d\n", "begin", 0}}, nullptr);
  EXPECT_TRUE(s);
  return std::move(*s);
}

// `count` records of format 0 in one stream's bytes.
std::vector<uint8_t> records(const TraceSchema &s, int count) {
  std::vector<uint8_t> bytes;
  sonde_record_stream stream{};
  for (int i = 0; i < count; ++i) {
    SondeFormatArg arg{};
    arg.i = i;
    uint8_t out[64];
    size_t n = sonde_record_encode(&stream, 0, 1000 + i, &s.table()[0], &arg, out);
    bytes.insert(bytes.end(), out, out + n);
  }
  return bytes;
}

} // namespace

// A kind no format has is refused, not read as a string.
TEST(RecordDamage, TheDecoderRefusesUnknownArgumentKinds) {
  static const uint8_t kinds[] = {SONDE_RECORD_ARG_LONG, 7};
  const sonde_record_desc desc{kinds, 2};
  const sonde_trace_clock clock{};
  sonde_record_decoder decoder{{}, &clock, &desc, 1};
  const uint8_t bytes[] = {0xff, 0x0f, 0, 0, 1, 0, 0,   0,   0,  0, 0, 0, // full timestamp
                           0x00, 0,    0, 0, 2, 3, 'a', 'b', 'c'};
  SondeFormatArg args[2];
  char scratch[64];
  sonde_decoded_record rec{};
  ASSERT_EQ(sonde_record_decode(&decoder, bytes, 12, args, 2, scratch, sizeof scratch, &rec),
            SONDE_RECORD_CLOCK);
  EXPECT_EQ(sonde_record_decode(&decoder, bytes + 12, sizeof bytes - 12, args, 2, scratch,
                                sizeof scratch, &rec),
            SONDE_RECORD_MALFORMED);
}

// What a stream sent before the damage is delivered; the damage names the
// stream and where in what was handed over it starts.
TEST(RecordDamage, AnUndecodableRecordIsNotedWithItsStream) {
  TraceSchema s = schema();
  const sonde_trace_clock clock{};
  CountingSink sink;
  RecordStreams streams(s, clock, sink, [](const std::string &) {});
  std::vector<uint8_t> bytes = records(s, 3);
  size_t sound = bytes.size();
  const uint8_t unknownId[] = {0x00, 0x0e, 0x00, 0x00}; // format 0xe00: none
  bytes.insert(bytes.end(), unknownId, unknownId + 4);
  streams.chunk(RecordOrigin{2, 500, 501}, reinterpret_cast<const char *>(bytes.data()),
                static_cast<uint32_t>(bytes.size()));
  EXPECT_EQ(sink.ids.size(), 3u);
  ASSERT_TRUE(streams.corruption().tripped());
  EXPECT_EQ(streams.corruption().what(),
            "the records of pid 500 tid 501 (stream 2): a record has an unknown format id, at "
            "byte " +
                std::to_string(sound) + " of " + std::to_string(bytes.size()) + " handed over");
}

TEST(RecordDamage, AStackListingMoreAddressesThanAHandlerSendsIsDropped) {
  TraceSchema s = schema();
  auto capture = std::make_unique<CountingSink>();
  CountingSink &seen = *capture;
  StackRecordSink sink(s, std::move(capture), 20);
  std::string stack;
  for (int i = 0; i < 21; ++i)
    stack += "0x1000 ";
  SondeFormatArg args[2] = {};
  args[1].s = stack.c_str();
  TraceEvent e{RecordOrigin{1, 7, 8}, 0, TraceSchema::kUserStackId, nullptr, args};
  sink.event(e);
  EXPECT_TRUE(seen.ids.empty());
  EXPECT_EQ(sink.corruption().what(), "the records of pid 7 tid 8 (stream 1): a stack lists 21 "
                                      "addresses, more than the 20 a handler sends");
  stack.resize(stack.size() - 7);
  args[1].s = stack.c_str();
  sink.event(e);
  EXPECT_EQ(seen.ids, (std::vector<uint32_t>{TraceSchema::kTextId}));
}

TEST(RecordDamage, AnObjectListLongerThanAProcessMapsIsDropped) {
  TraceSchema s = schema();
  StackRecordSink sink(s, std::make_unique<CountingSink>());
  std::string objects;
  for (size_t i = 0; i <= StackRecordSink::kMaxObjects; ++i)
    objects += "1000 2000 0 /x\n";
  SondeFormatArg arg{};
  arg.s = objects.c_str();
  sink.event(TraceEvent{RecordOrigin{1, 7, 8}, 0, TraceSchema::kObjectsId, nullptr, &arg});
  EXPECT_EQ(sink.corruption().what(), "the records of pid 7 tid 8 (stream 1): an object list "
                                      "names 65537 objects, more than a process maps");
}

} // namespace sonde::session
