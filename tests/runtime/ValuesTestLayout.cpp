// GlobalLayout: validation, placement, serialization; Segment creation and attach.
#include "ValuesTestSupport.h"

#include "runtime/values/SegmentFormat.h"

#include <sys/mman.h>
#include <unistd.h>

namespace sonde::values::test {
namespace {

std::string buildError(GlobalDesc d) {
  std::string error;
  auto layout = GlobalLayout::build({std::move(d)}, defaultLimits(), 2, &error);
  EXPECT_FALSE(layout.has_value());
  return error;
}

TEST(ValuesLayout, RejectsWhatStapRejects) {
  GlobalDesc tooWide = array("a", {KeyKind::Long}, ValueKind::Long);
  tooWide.keyCount = 10;
  EXPECT_NE(buildError(tooWide).find("too many array indexes (max 9)"), std::string::npos);
  GlobalDesc wrapped = scalar("x", ValueKind::Long);
  wrapped.wrap = true;
  EXPECT_NE(buildError(wrapped).find("wrapping not supported for scalars"), std::string::npos);
  GlobalDesc shift = scalar("s", ValueKind::Stats);
  shift.varianceShift = 63;
  EXPECT_NE(buildError(shift).find("bit shift (63) out of range <0..62>"), std::string::npos);
  GlobalDesc linear = scalar("h", ValueKind::Stats);
  linear.hist = HistKind::Linear;
  linear.histLow = 0;
  linear.histHigh = 126;
  linear.histWidth = 1; // 129 buckets
  EXPECT_FALSE(buildError(linear).empty());
  linear.histHigh = 125; // 128 buckets: the most stap allows
  std::string error;
  EXPECT_TRUE(GlobalLayout::build({linear}, defaultLimits(), 1, &error)) << error;
  linear.histWidth = 0;
  EXPECT_FALSE(buildError(linear).empty());
  GlobalDesc histOnLong = scalar("l", ValueKind::Long);
  histOnLong.hist = HistKind::Log;
  EXPECT_FALSE(buildError(histOnLong).empty());
  EXPECT_FALSE(GlobalLayout::build({scalar("a", ValueKind::Long), scalar("a", ValueKind::String)},
                                   defaultLimits(), 1, &error));
  EXPECT_NE(error.find("declared twice"), std::string::npos);
}

TEST(ValuesLayout, PlacementsAreAlignedDisjointAndInside) {
  GlobalDesc hist = scalar("h", ValueKind::Stats);
  hist.hist = HistKind::Log;
  std::vector<GlobalDesc> globals = {
      scalar("n", ValueKind::Long), scalar("str", ValueKind::String), hist,
      array("m", {KeyKind::String, KeyKind::Long}, ValueKind::String, 100),
      array("big", {KeyKind::Long}, ValueKind::Stats)};
  std::string error;
  auto layout = GlobalLayout::build(globals, defaultLimits(), 4, &error);
  ASSERT_TRUE(layout) << error;
  uint64_t end = kSegmentHeaderSize;
  for (const GlobalPlacement &p : layout->placements()) {
    EXPECT_EQ(p.offset % 64, 0u);
    EXPECT_GE(p.offset, end);
    EXPECT_EQ(p.dataOffset, p.offset + 64);
    end = p.offset + p.size;
  }
  EXPECT_LE(end, layout->segmentSize());
  EXPECT_EQ(layout->segmentSize() % 4096, 0u);
  EXPECT_EQ(layout->find("m"), 3);
  EXPECT_EQ(layout->find("nope"), -1);
}

TEST(ValuesLayout, SerializationRoundTripsAndFingerprintsDiffer) {
  GlobalDesc lin = scalar("lat", ValueKind::Stats);
  lin.hist = HistKind::Linear;
  lin.histLow = -50;
  lin.histHigh = 50;
  lin.histWidth = 5;
  lin.varianceShift = 4;
  lin.usesVariance = true;
  sonde_limits limits = defaultLimits();
  limits.max_string_len = 128;
  limits.max_errors = 3;
  std::string error;
  auto layout = GlobalLayout::build(
      {lin, array("w", {KeyKind::Long, KeyKind::String}, ValueKind::Long, 10, true),
       scalar("name", ValueKind::String)},
      limits, 3, &error);
  ASSERT_TRUE(layout) << error;
  std::vector<uint8_t> bytes = layout->serialize();
  auto back = GlobalLayout::deserialize(bytes.data(), bytes.size(), &error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(back->globals(), layout->globals());
  EXPECT_EQ(back->placements(), layout->placements());
  EXPECT_EQ(back->limits().max_errors, 3u);
  EXPECT_EQ(back->cpuSlots(), 3u);
  EXPECT_EQ(back->fingerprint(), layout->fingerprint());

  auto other = GlobalLayout::build({lin}, limits, 3, &error);
  EXPECT_NE(other->fingerprint(), layout->fingerprint());
  for (size_t cut : {size_t{0}, size_t{7}, bytes.size() / 2, bytes.size() - 1}) {
    EXPECT_FALSE(GlobalLayout::deserialize(bytes.data(), cut, &error)) << cut;
  }
  bytes.push_back(0);
  EXPECT_FALSE(GlobalLayout::deserialize(bytes.data(), bytes.size(), &error));
}

TEST(ValuesLayout, SegmentHeaderCarriesLimitsAndState) {
  sonde_limits limits = defaultLimits();
  limits.max_skipped = 7;
  TestState st = makeState({scalar("n", ValueKind::Long)}, limits, 2);
  const SegmentHeader &h = st.segment.header();
  EXPECT_EQ(std::string(h.magic, 8), "SONDESEG");
  EXPECT_EQ(h.totalSize, st.layout.segmentSize());
  EXPECT_EQ(h.cpuSlots, 2u);
  EXPECT_EQ(h.layoutFingerprint, st.layout.fingerprint());
  EXPECT_EQ(sonde_segment_limits(st.seg())->max_skipped, 7u);
  EXPECT_EQ(sonde_segment_limits(st.seg())->max_string_len, 512u);
  EXPECT_EQ(sonde_session_state(st.seg()), SONDE_SESSION_STARTING);
}

TEST(ValuesLayout, SecondMappingSeesTheSameState) {
  TestState st =
      makeState({scalar("n", ValueKind::Long), array("a", {KeyKind::String}, ValueKind::Long)});
  std::string error;
  auto second = Segment::attach(st.segment.fd(), st.layout.fingerprint(), &error);
  ASSERT_TRUE(second) << error;
  ASSERT_NE(second->base(), st.base());
  const GlobalPlacement &n = st.layout.placements()[0];
  *reinterpret_cast<int64_t *>(static_cast<char *>(st.base()) + n.dataOffset) = 42;
  EXPECT_EQ(*reinterpret_cast<int64_t *>(static_cast<char *>(second->base()) + n.dataOffset), 42);
  auto *viaSecond =
      reinterpret_cast<sonde_map *>(static_cast<char *>(second->base()) + st.offset("a"));
  sonde_key k[] = {S("key")};
  ASSERT_EQ(sonde_map_set_long(viaSecond, k, 9), SONDE_OK);
  EXPECT_EQ(sonde_map_get_long(st.map("a"), k), 9);
}

TEST(ValuesLayout, AttachRefusesForeignSegments) {
  TestState st = makeState({scalar("n", ValueKind::Long)});
  std::string error;
  EXPECT_FALSE(Segment::attach(st.segment.fd(), st.layout.fingerprint() + 1, &error));
  EXPECT_EQ(error, "state segment built for another script");
  int fd = memfd_create("not-sonde", MFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, static_cast<off_t>(kSegmentHeaderSize)), 0);
  EXPECT_FALSE(Segment::attach(fd, 0, &error));
  EXPECT_EQ(error, "not a sonde state segment");
  close(fd);
  // The size is sealed: a target cannot shrink the file under sonde's mapping.
  EXPECT_NE(ftruncate(st.segment.fd(), 4096), 0);
}

} // namespace
} // namespace sonde::values::test
