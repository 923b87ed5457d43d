// The state segment as sonde sees it after a traced process wrote over it:
// sonde takes shapes from its own copy, checks every link, count, slot and lock
// word it reads, never reads or writes outside the segment, never loops, and
// notes which global was damaged (the session ends on that).
#include "ValuesTestSupport.h"

#include "runtime/values/MapTable.h"
#include "runtime/values/ScalarStats.h"
#include "runtime/values/SegmentCheck.h"
#include "runtime/values/SegmentShadow.h"

#include <cstring>
#include <unistd.h>

namespace sonde::values::test {
namespace {

MapHeader *mapHeader(const TestState &st, const std::string &name) {
  return globalData<MapHeader>(reinterpret_cast<GlobalHeader *>(st.map(name)));
}

StatsHeader *statsHeader(const TestState &st, const std::string &name) {
  return globalData<StatsHeader>(reinterpret_cast<GlobalHeader *>(st.stats(name)));
}

GlobalHeader *globalHeader(const TestState &st, const std::string &name) {
  return reinterpret_cast<GlobalHeader *>(st.map(name));
}

std::string damage(const TestState &st) { return segmentCorruption(st.base()).value_or(""); }

// Entry `ref` of a map, placed by the map's real (trusted) shape.
EntryHeader *entryOf(const TestState &st, const std::string &name, uint32_t ref) {
  return MapTable(mapHeader(st, name)).entry(ref);
}

void fill(const TestState &st, const std::string &name, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    sonde_key k[] = {L(i)};
    ASSERT_EQ(sonde_map_set_long(st.map(name), k, i * 10), SONDE_OK);
  }
}

// Keys in an unsorted foreach, at most `cap` of them.
std::vector<int64_t> keysInOrder(const TestState &st, const std::string &name, size_t cap = 100) {
  sonde_foreach_spec spec{SONDE_SORT_NONE, 0, 0, 0, SONDE_NO_LIMIT, nullptr};
  sonde_iter it;
  std::vector<int64_t> keys;
  if (sonde_foreach_begin(st.map(name), &spec, &it) == SONDE_OK)
    while (keys.size() < cap && sonde_foreach_next(&it))
      keys.push_back(sonde_iter_key_long(&it, 1));
  sonde_foreach_end(&it);
  return keys;
}

TestState longMap(uint32_t size = 16) {
  return makeState({array("a", {KeyKind::Long}, ValueKind::Long, size)});
}

} // namespace

// Sizes, offsets and the index mask come from sonde's copy: with the map's
// static header overwritten, every operation still lands inside the map and
// gives the right answers; the full check names the damage.
TEST(ValuesDamage, AnOverwrittenStaticHeaderIsNeverUsed) {
  TestState st = longMap();
  fill(st, "a", 5);
  MapHeader *h = mapHeader(st, "a");
  h->indexMask = ~0u;
  h->maxEntries = ~0u;
  h->entriesOffset = 1ull << 40;
  h->indexOffset = 1ull << 40;
  h->entryStride = 1u << 30;
  h->keyOffsets[0] = 1u << 30;
  h->valueOffset = 1u << 30;
  h->keyCount = 200;
  sonde_key k[] = {L(3)};
  EXPECT_EQ(sonde_map_get_long(st.map("a"), k), 30);
  sonde_key fresh[] = {L(99)};
  EXPECT_EQ(sonde_map_set_long(st.map("a"), fresh, 7), SONDE_OK);
  sonde_map_delete(st.map("a"), k);
  EXPECT_EQ(keysInOrder(st, "a"), (std::vector<int64_t>{0, 1, 2, 4, 99}));
  EXPECT_EQ(damage(st), "");
  EXPECT_EQ(checkSegment(st.segment, st.layout, true),
            "global 'a': its header's static fields (kind, sizes, offsets) were overwritten");
}

TEST(ValuesDamage, ACountPastTheSizeIsNoted) {
  TestState st = longMap();
  fill(st, "a", 3);
  mapHeader(st, "a")->count = 0x7ffffff0;
  EXPECT_EQ(sonde_map_count(st.map("a")), 0u);
  EXPECT_EQ(damage(st), "global 'a': its entry count 2147483632 is past its size");
}

TEST(ValuesDamage, AnOldestLinkOutOfRangeEndsEveryWalk) {
  TestState st = longMap();
  fill(st, "a", 3);
  mapHeader(st, "a")->head = 0x7ffffff0;
  EXPECT_TRUE(keysInOrder(st, "a").empty());
  sonde_key wild[] = {L(0)};
  EXPECT_EQ(sonde_map_exists_wild(st.map("a"), wild, 1), 0);
  sonde_map_clear(st.map("a"));
  EXPECT_EQ(damage(st), "global 'a': its oldest-entry link 2147483632 is out of range");
}

// A newer-entry link back to an older entry would make a loop: every walk ends.
TEST(ValuesDamage, ALoopInTheOrderListEndsEveryWalk) {
  TestState st = longMap();
  fill(st, "a", 4);
  entryOf(st, "a", 3)->next = 1;
  EXPECT_EQ(keysInOrder(st, "a"), (std::vector<int64_t>{0, 1, 2}));
  sonde_key wild[] = {L(77)};
  EXPECT_EQ(sonde_map_exists_wild(st.map("a"), wild, 1), 1);
  sonde_map_delete_wild(st.map("a"), wild, 1);
  EXPECT_EQ(damage(st), "global 'a': its insertion-order list links back to the older entry 1");
}

TEST(ValuesDamage, AnIndexSlotNamingAnEntryPastTheSizeIsNotFollowed) {
  TestState st = longMap();
  fill(st, "a", 1);
  MapTable t(mapHeader(st, "a"));
  uint64_t *index = reinterpret_cast<uint64_t *>(reinterpret_cast<char *>(mapHeader(st, "a")) +
                                                 t.header().indexOffset);
  for (uint32_t i = 0; i <= t.header().indexMask; ++i)
    if (index[i])
      index[i] = (index[i] & ~0xffffffffull) | 0x7ffffff0u;
  sonde_key k[] = {L(0)};
  EXPECT_EQ(sonde_map_get_long(st.map("a"), k), 0);
  EXPECT_EQ(damage(st), "global 'a': an index slot names entry 2147483632, past its size");
}

// An index with no empty slot would make a probe never end.
TEST(ValuesDamage, AFullIndexEndsEveryProbe) {
  TestState st = longMap();
  MapTable t(mapHeader(st, "a"));
  auto *index = reinterpret_cast<uint64_t *>(reinterpret_cast<char *>(mapHeader(st, "a")) +
                                             t.header().indexOffset);
  for (uint32_t i = 0; i <= t.header().indexMask; ++i)
    index[i] = 1; // hash 0, entry 1
  sonde_key k[] = {L(5)};
  EXPECT_EQ(sonde_map_get_long(st.map("a"), k), 0);
  EXPECT_EQ(sonde_map_set_long(st.map("a"), k, 1), SONDE_ERR_MAP_FULL);
  EXPECT_NE(damage(st).find("its index has no empty slot among its"), std::string::npos)
      << damage(st);
}

TEST(ValuesDamage, AFreeLinkOutOfRangeRefusesTheInsert) {
  TestState st = longMap();
  fill(st, "a", 3);
  sonde_key k[] = {L(1)};
  sonde_map_delete(st.map("a"), k);
  mapHeader(st, "a")->freeHead = 0x7ffffff0;
  sonde_key fresh[] = {L(50)};
  EXPECT_EQ(sonde_map_set_long(st.map("a"), fresh, 1), SONDE_ERR_MAP_FULL);
  EXPECT_EQ(damage(st), "global 'a': its free-entry link 2147483632 is out of range");
}

TEST(ValuesDamage, AnEntrysIndexSlotNotPointingBackStopsTheDelete) {
  TestState st = longMap();
  fill(st, "a", 2);
  entryOf(st, "a", 2)->slot = 0x7ffffff0;
  sonde_key k[] = {L(1)};
  sonde_map_delete(st.map("a"), k);
  EXPECT_EQ(damage(st), "global 'a': an entry's index slot 2147483632 does not point back at it");
}

// The full check passes on every state the runtime itself leaves (inserts,
// deletes, wrap-around, clears, stats), so it never fails a sound run.
TEST(ValuesDamage, TheFullCheckPassesOnASoundSegment) {
  GlobalDesc histograms = array("h", {KeyKind::Long}, ValueKind::Stats, 16);
  histograms.hist = HistKind::Log;
  GlobalDesc samples = scalar("t", ValueKind::Stats);
  samples.hist = HistKind::Linear;
  samples.histLow = 0;
  samples.histHigh = 200;
  samples.histWidth = 10;
  TestState st = makeState(
      {array("a", {KeyKind::Long}, ValueKind::Long, 32),
       array("w", {KeyKind::String, KeyKind::Long}, ValueKind::String, 8, true), histograms,
       scalar("s", ValueKind::String), scalar("n", ValueKind::Long), samples});
  for (int64_t i = 0; i < 300; ++i) {
    sonde_key k[] = {L(i % 40)};
    if (i % 3 == 0)
      sonde_map_delete(st.map("a"), k);
    else
      sonde_map_set_long(st.map("a"), k, i);
    std::string name = "k" + std::to_string(i % 13);
    sonde_key w[] = {S(name.c_str()), L(i)};
    sonde_map_set_string(st.map("w"), w, name.c_str());
    sonde_key hk[] = {L(i % 5)};
    sonde_map_stats_add(st.map("h"), hk, i);
    sonde_stats_add(st.stats("t"), i);
    if (i == 150)
      sonde_map_clear(st.map("a"));
  }
  EXPECT_EQ(checkSegment(st.segment, st.layout, true), std::nullopt);
}

TEST(ValuesDamage, TheFullCheckFindsBrokenInvariants) {
  struct Case {
    const char *what;
    void (*damage)(TestState &);
    const char *expected;
  };
  const Case cases[] = {
      {"an unterminated key",
       [](TestState &st) {
         MapTable t(mapHeader(st, "k"));
         std::memset(t.key(1, 0), 'x', st.layout.limits().max_string_len);
       },
       "global 'k': the string key of entry 1 is not terminated"},
      {"a dead entry in the list", [](TestState &st) { entryOf(st, "k", 2)->live = 0; },
       "global 'k': entry 2 of its insertion-order list is not live"},
      {"a wrong back link", [](TestState &st) { entryOf(st, "k", 3)->prev = 1; },
       "global 'k': entry 3 has a wrong older-entry link"},
      {"a count too low", [](TestState &st) { mapHeader(st, "k")->count = 2; },
       "global 'k': its insertion-order list is longer than its count of 2"},
      {"a negative bucket",
       [](TestState &st) {
         MapTable t(mapHeader(st, "h"));
         blockBuckets(t.statValue(1))[3] = -5;
       },
       "global 'h': a histogram bucket has a negative count in entry 1"},
      {"buckets not adding up",
       [](TestState &st) {
         MapTable t(mapHeader(st, "h"));
         t.statValue(1)->count += 1;
       },
       "global 'h': a histogram's buckets do not add up to its count in entry 1"},
      {"a scalar stats slot",
       [](TestState &st) {
         StatBlock *slot = statsSlot(statsHeader(st, "t"), 0);
         slot->count = 1;
         slot->min = 100;
         slot->max = 0;
       },
       "global 't': a stats value has its minimum above its maximum in per-CPU slot 0"},
      {"an unterminated string",
       [](TestState &st) {
         std::memset(static_cast<char *>(st.base()) + st.layout.placements()[3].dataOffset, 'x',
                     st.layout.limits().max_string_len);
       },
       "global 's': its string is not terminated"},
  };
  for (const Case &c : cases) {
    GlobalDesc histograms = array("h", {KeyKind::Long}, ValueKind::Stats, 8);
    histograms.hist = HistKind::Log;
    TestState st = makeState({array("k", {KeyKind::String}, ValueKind::Long, 8), histograms,
                              scalar("t", ValueKind::Stats), scalar("s", ValueKind::String)});
    for (const char *key : {"a", "b", "c"}) {
      sonde_key k[] = {S(key)};
      sonde_map_set_long(st.map("k"), k, 1);
    }
    sonde_key h[] = {L(1)};
    sonde_map_stats_add(st.map("h"), h, 5);
    sonde_stats_add(st.stats("t"), 5);
    sonde_stats_add(st.stats("t"), 9);
    c.damage(st);
    EXPECT_EQ(checkSegment(st.segment, st.layout, true).value_or("(none)"), c.expected) << c.what;
  }
}

// A lock word naming no process is damage: the hit is skipped at once (never
// a wait on a holder that cannot exist).
TEST(ValuesDamage, ALockWordNamingNoProcessSkipsTheHit) {
  TestState st = longMap();
  uint64_t off = st.offset("a");
  globalHeader(st, "a")->lock.store(0xdeadbeef);
  EXPECT_EQ(sonde_locks_take(st.seg(), &off, 1), SONDE_ERR_SKIPPED);
  EXPECT_EQ(damage(st), "global 'a': its lock word 3735928559 names no process");
}

// Once sonde's handlers have all returned, a lock held in its name is damage;
// one a live traced process holds (it may be stopped in a handler) is not
// waited for, only left unchecked.
TEST(ValuesDamage, ALockHeldInSondesNameWhenNoHandlerRunsIsDamage) {
  TestState st = longMap();
  globalHeader(st, "a")->lock.store(1);
  EXPECT_EQ(checkSegment(st.segment, st.layout, true), std::nullopt);
  uint32_t me = static_cast<uint32_t>(getpid());
  globalHeader(st, "a")->lock.store(me);
  EXPECT_EQ(checkSegment(st.segment, st.layout, false), std::nullopt) << "handlers may still run";
  EXPECT_EQ(checkSegment(st.segment, st.layout, true),
            "global 'a': its lock word names sonde (pid " + std::to_string(me) +
                "), which runs no handler any more");
}

TEST(ValuesDamage, ALockWordChangedWhileSondeHoldsItIsNoted) {
  TestState st = longMap();
  uint64_t off = st.offset("a");
  ASSERT_EQ(sonde_locks_take(st.seg(), &off, 1), SONDE_OK);
  globalHeader(st, "a")->lock.store(1);
  sonde_locks_release(st.seg(), &off, 1);
  EXPECT_EQ(globalHeader(st, "a")->lock.load(), 0u);
  EXPECT_EQ(damage(st), "global 'a': its lock word changed to 1 while sonde held the lock");
}

// Slot count, stride and shape come from sonde's copy; a slot lock naming no
// process is damage (and the slot is read all the same).
TEST(ValuesDamage, ScalarStatsKeepToTheirOwnShape) {
  TestState st = makeState({scalar("t", ValueKind::Stats)});
  for (int i = 1; i <= 10; ++i)
    sonde_stats_add(st.stats("t"), i);
  StatsHeader *h = statsHeader(st, "t");
  uint32_t slots = h->slotCount;
  h->slotCount = ~0u;
  h->slotStride = 1u << 30;
  h->shape.buckets = 1u << 20;
  h->shape.histKind = SONDE_STAT_HIST_LOG;
  sonde_stats_add(st.stats("t"), 11);
  int64_t sum = 0;
  EXPECT_EQ(sonde_stats_extract(st.stats("t"), SONDE_STAT_SUM, &sum), SONDE_OK);
  EXPECT_EQ(sum, 66);
  EXPECT_EQ(damage(st), "");
  h->slotCount = slots;
  h->slotStride = static_cast<uint32_t>(reinterpret_cast<char *>(statsSlot(h, 1)) -
                                        reinterpret_cast<char *>(statsSlot(h, 0)));
  for (uint32_t i = 0; i < slots; ++i)
    statsSlot(h, i)->slotLock.store(0xfffffff0u);
  EXPECT_EQ(sonde_stats_extract(st.stats("t"), SONDE_STAT_SUM, &sum), SONDE_OK);
  EXPECT_EQ(sum, 66);
  EXPECT_EQ(damage(st), "global 't': a per-CPU slot's lock word 4294967280 names no process");
}

// The limits sonde uses are its own: a target cannot stretch its lock waits.
TEST(ValuesDamage, HeaderFieldsAreCheckedAndNeverUsed) {
  TestState st = longMap();
  SegmentHeader &h = segmentHeader(st.seg());
  h.limits.try_lock_delay_us = ~0u;
  h.limits.max_try_lock = ~0u;
  EXPECT_EQ(sonde_segment_limits(st.seg())->try_lock_delay_us, defaultLimits().try_lock_delay_us);
  EXPECT_EQ(checkSegmentHeader(st.base()),
            "the state segment's header: its static field 'limits' was overwritten");
}

TEST(ValuesDamage, AgentSlotsAndSessionStateAreChecked) {
  {
    TestState st = longMap();
    // kill(-1, 0) would find every process: such a slot is no agent.
    segmentHeader(st.seg()).agentPids[7].store(0xffffffffu);
    EXPECT_EQ(sonde_session_agent_count(st.seg()), 0u);
    EXPECT_EQ(checkSegmentHeader(st.base()),
              "the state segment's header: an agent slot holds 4294967295, not a pid");
  }
  TestState st = longMap();
  segmentHeader(st.seg()).sessionState.store(77);
  EXPECT_EQ(checkSegmentHeader(st.base()),
            "the state segment's header: its session state is 77, not a state");
}

// A string left unterminated at the very end of the segment still ends: the
// mapping is followed by a page of zeros no other process can write.
TEST(ValuesDamage, AStringRunningOffTheSegmentEndsInTheGuardPage) {
  TestState st = makeState({scalar("n", ValueKind::Long), scalar("s", ValueKind::String)});
  char *base = static_cast<char *>(st.base());
  uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  uint64_t mapped = (st.segment.size() + page - 1) / page * page;
  uint64_t at = st.layout.placements()[1].dataOffset;
  std::memset(base + at, 'x', mapped - at);
  EXPECT_EQ(strlen(base + at), mapped - at);
}

} // namespace sonde::values::test
