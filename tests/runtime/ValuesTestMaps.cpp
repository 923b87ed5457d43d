// Array globals: every map operation, wide keys, limits, wrap and churn.
#include "ValuesTestSupport.h"

#include "runtime/values/SegmentFormat.h"

#include <chrono>
#include <cstring>
#include <map>
#include <random>
#include <string>

namespace sonde::values::test {
namespace {

TEST(ValuesMaps, MissingKeyReadsZeroAndIsNotCreated) {
  TestState st = makeState({array("a", {KeyKind::Long}, ValueKind::Long),
                            array("s", {KeyKind::String}, ValueKind::String)});
  sonde_key k[] = {L(7)};
  EXPECT_EQ(sonde_map_get_long(st.map("a"), k), 0);
  EXPECT_EQ(sonde_map_exists(st.map("a"), k), 0);
  EXPECT_EQ(sonde_map_count(st.map("a")), 0u);
  char out[512] = "junk";
  sonde_key ks[] = {S("nope")};
  sonde_map_get_string(st.map("s"), ks, out);
  EXPECT_STREQ(out, "");
  EXPECT_EQ(sonde_map_count(st.map("s")), 0u);
}

TEST(ValuesMaps, SetGetOverwriteAndZeroValuesExist) {
  TestState st = makeState({array("a", {KeyKind::Long}, ValueKind::Long)});
  sonde_map *a = st.map("a");
  for (int64_t i = -50; i < 50; ++i) {
    sonde_key k[] = {L(i * 1'000'003)};
    ASSERT_EQ(sonde_map_set_long(a, k, i * 3), SONDE_OK);
  }
  EXPECT_EQ(sonde_map_count(a), 100u);
  sonde_key k[] = {L(5 * 1'000'003)};
  EXPECT_EQ(sonde_map_get_long(a, k), 15);
  ASSERT_EQ(sonde_map_set_long(a, k, -1), SONDE_OK);
  EXPECT_EQ(sonde_map_get_long(a, k), -1);
  EXPECT_EQ(sonde_map_count(a), 100u);
  // a[0] = 0 still creates the entry, as in stap.
  sonde_key zero[] = {L(0)};
  EXPECT_EQ(sonde_map_exists(a, zero), 1);
  EXPECT_EQ(sonde_map_get_long(a, zero), 0);
}

TEST(ValuesMaps, StringValuesAreTruncatedToMaxStringLen) {
  sonde_limits limits = defaultLimits();
  limits.max_string_len = 16;
  TestState st = makeState({array("s", {KeyKind::Long}, ValueKind::String)}, limits);
  sonde_map *s = st.map("s");
  sonde_key k[] = {L(1)};
  ASSERT_EQ(sonde_map_set_string(s, k, "0123456789abcdefghij"), SONDE_OK);
  char out[16];
  sonde_map_get_string(s, k, out);
  EXPECT_STREQ(out, "0123456789abcde");
  ASSERT_EQ(sonde_map_set_string(s, k, ""), SONDE_OK);
  sonde_map_get_string(s, k, out);
  EXPECT_STREQ(out, "");
  EXPECT_EQ(sonde_map_exists(s, k), 1);
}

TEST(ValuesMaps, RefGivesOneLookupReadModifyWrite) {
  TestState st = makeState({array("a", {KeyKind::String}, ValueKind::Long),
                            array("t", {KeyKind::Long}, ValueKind::String)});
  sonde_key k[] = {S("hits")};
  for (int i = 0; i < 10; ++i) {
    int64_t *v = nullptr;
    ASSERT_EQ(sonde_map_ref_long(st.map("a"), k, &v), SONDE_OK);
    ++*v;
  }
  EXPECT_EQ(sonde_map_get_long(st.map("a"), k), 10);
  char *text = nullptr;
  sonde_key kt[] = {L(3)};
  ASSERT_EQ(sonde_map_ref_string(st.map("t"), kt, &text), SONDE_OK);
  EXPECT_STREQ(text, "");
  std::strcpy(text, "abc");
  char out[512];
  sonde_map_get_string(st.map("t"), kt, out);
  EXPECT_STREQ(out, "abc");
}

TEST(ValuesMaps, DeleteOneAndMissing) {
  TestState st = makeState({array("a", {KeyKind::Long, KeyKind::String}, ValueKind::Long)});
  sonde_map *a = st.map("a");
  sonde_key k1[] = {L(1), S("x")}, k2[] = {L(1), S("y")}, k3[] = {L(2), S("x")};
  sonde_map_set_long(a, k1, 1);
  sonde_map_set_long(a, k2, 2);
  sonde_map_set_long(a, k3, 3);
  sonde_map_delete(a, k2);
  sonde_map_delete(a, k2); // missing is fine
  EXPECT_EQ(sonde_map_count(a), 2u);
  EXPECT_EQ(sonde_map_exists(a, k2), 0);
  EXPECT_EQ(sonde_map_get_long(a, k1), 1);
  EXPECT_EQ(sonde_map_get_long(a, k3), 3);
}

TEST(ValuesMaps, WildcardDeleteAndMembership) {
  TestState st = makeState({array("a", {KeyKind::Long, KeyKind::String}, ValueKind::Long)});
  sonde_map *a = st.map("a");
  const char *names[] = {"read", "write", "open"};
  for (int64_t pid = 1; pid <= 4; ++pid)
    for (const char *n : names) {
      sonde_key k[] = {L(pid), S(n)};
      sonde_map_set_long(a, k, pid);
    }
  // [*, "write"] in a; delete a[*, "write"]; the string column of `*` is never read.
  sonde_key wildPid[] = {L(0), S("write")};
  EXPECT_EQ(sonde_map_exists_wild(a, wildPid, 0b01), 1);
  sonde_map_delete_wild(a, wildPid, 0b01);
  EXPECT_EQ(sonde_map_exists_wild(a, wildPid, 0b01), 0);
  EXPECT_EQ(sonde_map_count(a), 8u);
  sonde_key wildName[] = {L(3), S(nullptr)};
  EXPECT_EQ(sonde_map_exists_wild(a, wildName, 0b10), 1);
  sonde_map_delete_wild(a, wildName, 0b10);
  EXPECT_EQ(sonde_map_count(a), 6u);
  EXPECT_EQ(sonde_map_exists_wild(a, wildName, 0b10), 0);
  sonde_key open2[] = {L(2), S("open")};
  EXPECT_EQ(sonde_map_exists_wild(a, open2, 0), 1);
  sonde_key all[] = {L(0), S(nullptr)};
  EXPECT_EQ(sonde_map_exists_wild(a, all, 0b11), 1);
  sonde_map_delete_wild(a, all, 0b11);
  EXPECT_EQ(sonde_map_count(a), 0u);
  EXPECT_EQ(sonde_map_exists_wild(a, all, 0b11), 0);
}

TEST(ValuesMaps, ClearEmptiesAndTheMapIsReusable) {
  TestState st = makeState({array("a", {KeyKind::Long}, ValueKind::Long, 64)});
  sonde_map *a = st.map("a");
  for (int round = 0; round < 3; ++round) {
    for (int64_t i = 0; i < 64; ++i) {
      sonde_key k[] = {L(i + round)};
      ASSERT_EQ(sonde_map_set_long(a, k, i), SONDE_OK);
    }
    EXPECT_EQ(sonde_map_count(a), 64u);
    sonde_map_clear(a);
    EXPECT_EQ(sonde_map_count(a), 0u);
    sonde_key k[] = {L(round)};
    EXPECT_EQ(sonde_map_exists(a, k), 0);
  }
}

TEST(ValuesMaps, NineKeyColumnsOfMixedKinds) {
  std::initializer_list<KeyKind> kinds = {KeyKind::Long,   KeyKind::String, KeyKind::Long,
                                          KeyKind::String, KeyKind::Long,   KeyKind::String,
                                          KeyKind::Long,   KeyKind::String, KeyKind::Long};
  TestState st = makeState({array("a", kinds, ValueKind::Long)});
  sonde_map *a = st.map("a");
  auto tuple = [](int variant, std::vector<std::string> &texts) {
    std::vector<sonde_key> k;
    texts.clear();
    texts.reserve(9);
    for (int c = 0; c < 9; ++c) {
      int64_t v = c == variant % 9 ? variant : c;
      if (c % 2 == 0) {
        k.push_back(L(v));
      } else {
        texts.push_back("col" + std::to_string(v));
        k.push_back(S(texts.back().c_str()));
      }
    }
    return k;
  };
  std::vector<std::string> texts;
  for (int v = 100; v < 190; ++v) {
    auto k = tuple(v, texts);
    ASSERT_EQ(sonde_map_set_long(a, k.data(), v), SONDE_OK);
  }
  EXPECT_EQ(sonde_map_count(a), 90u);
  for (int v = 100; v < 190; ++v) {
    auto k = tuple(v, texts);
    EXPECT_EQ(sonde_map_get_long(a, k.data()), v);
  }
  // Tuples differing only in the last column are distinct; `*` there matches all.
  auto k = tuple(8, texts); // column 8 == 8: the base tuple
  EXPECT_EQ(sonde_map_exists(a, k.data()), 0);
  EXPECT_EQ(sonde_map_exists_wild(a, k.data(), 1u << 8), 1);
  sonde_map_delete_wild(a, k.data(), 1u << 8);
  EXPECT_EQ(sonde_map_count(a), 80u);
}

TEST(ValuesMaps, StringKeysNearMaxStringLen) {
  TestState st = makeState({array("a", {KeyKind::String}, ValueKind::Long)});
  sonde_map *a = st.map("a");
  std::string k510(510, 'k'), k511(511, 'k'), k512(512, 'k'), k600(600, 'k');
  std::string k511b = k511;
  k511b[510] = 'z';
  sonde_key key510[] = {S(k510.c_str())}, key511[] = {S(k511.c_str())},
            key512[] = {S(k512.c_str())}, key600[] = {S(k600.c_str())},
            key511b[] = {S(k511b.c_str())};
  ASSERT_EQ(sonde_map_set_long(a, key510, 1), SONDE_OK);
  ASSERT_EQ(sonde_map_set_long(a, key511, 2), SONDE_OK);
  ASSERT_EQ(sonde_map_set_long(a, key511b, 4), SONDE_OK);
  // Keys are MAXSTRINGLEN-1 = 511 bytes at most: longer ones are the same key.
  ASSERT_EQ(sonde_map_set_long(a, key600, 3), SONDE_OK);
  EXPECT_EQ(sonde_map_count(a), 3u);
  EXPECT_EQ(sonde_map_get_long(a, key510), 1);
  EXPECT_EQ(sonde_map_get_long(a, key511), 3);
  EXPECT_EQ(sonde_map_get_long(a, key512), 3);
  EXPECT_EQ(sonde_map_get_long(a, key511b), 4);
  sonde_foreach_spec spec{SONDE_SORT_NONE, 0, 0, 0, SONDE_NO_LIMIT, nullptr};
  sonde_iter it;
  ASSERT_EQ(sonde_foreach_begin(a, &spec, &it), SONDE_OK);
  ASSERT_EQ(sonde_foreach_next(&it), 1);
  ASSERT_EQ(sonde_foreach_next(&it), 1);
  EXPECT_EQ(std::string(sonde_iter_key_string(&it, 1)), k511);
  sonde_foreach_end(&it);
}

TEST(ValuesMaps, StringKeysOfEveryShortLengthStayDistinct) {
  TestState st = makeState({array("a", {KeyKind::String}, ValueKind::Long)});
  sonde_map *a = st.map("a");
  std::vector<std::string> keys = {""};
  for (size_t len = 1; len <= 40; ++len)
    for (char fill : {'a', 'b'}) {
      std::string k(len, 'x');
      k[len / 2] = fill; // keys differing only in their middle byte
      keys.push_back(k);
    }
  for (size_t i = 0; i < keys.size(); ++i) {
    sonde_key k[] = {S(keys[i].c_str())};
    ASSERT_EQ(sonde_map_set_long(a, k, static_cast<int64_t>(i)), SONDE_OK);
  }
  ASSERT_EQ(sonde_map_count(a), keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    sonde_key k[] = {S(keys[i].c_str())};
    EXPECT_EQ(sonde_map_get_long(a, k), static_cast<int64_t>(i)) << '"' << keys[i] << '"';
  }
}

TEST(ValuesMaps, OverflowReportsTheRightLimit) {
  sonde_limits limits = defaultLimits();
  limits.max_map_entries = 8;
  TestState st = makeState({array("sized", {KeyKind::Long}, ValueKind::Long, 4),
                            array("dflt", {KeyKind::Long}, ValueKind::Stats)},
                           limits);
  for (int64_t i = 0; i < 4; ++i) {
    sonde_key k[] = {L(i)};
    ASSERT_EQ(sonde_map_set_long(st.map("sized"), k, i), SONDE_OK);
  }
  sonde_key five[] = {L(99)};
  EXPECT_EQ(sonde_map_set_long(st.map("sized"), five, 1), SONDE_ERR_MAP_FULL);
  int64_t *ref = nullptr;
  EXPECT_EQ(sonde_map_ref_long(st.map("sized"), five, &ref), SONDE_ERR_MAP_FULL);
  EXPECT_EQ(ref, nullptr);
  // Existing keys stay writable, reads of missing keys stay harmless.
  sonde_key two[] = {L(2)};
  EXPECT_EQ(sonde_map_set_long(st.map("sized"), two, 20), SONDE_OK);
  EXPECT_EQ(sonde_map_get_long(st.map("sized"), five), 0);
  char msg[128];
  sonde_map_overflow_message(st.map("sized"), nullptr, msg, sizeof(msg));
  EXPECT_STREQ(msg, "Array overflow, check size limit (4)");

  for (int64_t i = 0; i < 8; ++i) {
    sonde_key k[] = {L(i)};
    ASSERT_EQ(sonde_map_stats_add(st.map("dflt"), k, i), SONDE_OK);
  }
  EXPECT_EQ(sonde_map_stats_add(st.map("dflt"), five, 1), SONDE_ERR_MAP_FULL);
  sonde_map_overflow_message(st.map("dflt"), nullptr, msg, sizeof(msg));
  EXPECT_STREQ(msg, "Array overflow, check MAXMAPENTRIES");
  // Named, it says which global, its limit and what to raise it to (issue 20, item 14).
  sonde_map_overflow_message(st.map("dflt"), "dflt", msg, sizeof(msg));
  EXPECT_STREQ(msg, "Array overflow, check MAXMAPENTRIES (8 entries) of global 'dflt': run with "
                    "-D MAXMAPENTRIES=16 or declare it `global dflt[16]`");
  sonde_map_overflow_message(st.map("sized"), "sized", msg, sizeof(msg));
  EXPECT_STREQ(msg, "Array overflow, check size limit (4)");
  EXPECT_STREQ(sonde_status_text(SONDE_ERR_MAP_FULL), "Array overflow, check MAXMAPENTRIES");
}

TEST(ValuesMaps, WrapEvictsTheOldestCreatedEntry) {
  TestState st = makeState({array("w", {KeyKind::Long}, ValueKind::Long, 3, true)});
  sonde_map *w = st.map("w");
  for (int64_t i = 1; i <= 3; ++i) {
    sonde_key k[] = {L(i)};
    ASSERT_EQ(sonde_map_set_long(w, k, i * 10), SONDE_OK);
  }
  sonde_key one[] = {L(1)};
  ASSERT_EQ(sonde_map_set_long(w, one, 11), SONDE_OK); // an update does not renew it
  for (int64_t i = 4; i <= 5; ++i) {
    sonde_key k[] = {L(i)};
    ASSERT_EQ(sonde_map_set_long(w, k, i * 10), SONDE_OK);
  }
  EXPECT_EQ(sonde_map_count(w), 3u);
  for (int64_t i = 1; i <= 5; ++i) {
    sonde_key k[] = {L(i)};
    EXPECT_EQ(sonde_map_exists(w, k), i >= 3 ? 1 : 0) << i;
  }
}

// Mean and worst distance of live index slots from their home slot.
std::pair<double, uint32_t> probeDistances(sonde_map *m) {
  const auto *h = globalData<MapHeader>(reinterpret_cast<const GlobalHeader *>(m));
  const auto *slots =
      reinterpret_cast<const uint64_t *>(reinterpret_cast<const char *>(h) + h->indexOffset);
  uint64_t total = 0, used = 0;
  uint32_t worst = 0;
  for (uint32_t i = 0; i <= h->indexMask; ++i) {
    if (!slots[i])
      continue;
    uint32_t d = (i - static_cast<uint32_t>(slots[i] >> 32)) & h->indexMask;
    total += d;
    ++used;
    worst = std::max(worst, d);
  }
  return {used ? double(total) / double(used) : 0.0, worst};
}

TEST(ValuesMaps, DeleteChurnNeitherDegradesNorLosesEntries) {
  TestState st = makeState({array("a", {KeyKind::Long}, ValueKind::Long)});
  sonde_map *a = st.map("a");
  std::map<int64_t, int64_t> model;
  std::mt19937_64 rng(42);
  auto start = std::chrono::steady_clock::now();
  for (int op = 0; op < 1'000'000; ++op) {
    int64_t key = static_cast<int64_t>(rng() % 6000);
    sonde_key k[] = {L(key)};
    if (model.size() < 2000 && (rng() & 1)) {
      ASSERT_EQ(sonde_map_set_long(a, k, op), SONDE_OK);
      model[key] = op;
    } else {
      sonde_map_delete(a, k);
      model.erase(key);
    }
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 20.0) << "a million operations must not slow down with deletions";
  ASSERT_EQ(sonde_map_count(a), model.size());
  for (int64_t key = 0; key < 6000; ++key) {
    sonde_key k[] = {L(key)};
    auto it = model.find(key);
    ASSERT_EQ(sonde_map_exists(a, k), it != model.end() ? 1 : 0) << key;
    if (it != model.end())
      ASSERT_EQ(sonde_map_get_long(a, k), it->second);
  }
  auto [mean, worst] = probeDistances(a);
  EXPECT_LT(mean, 2.0);
  EXPECT_LT(worst, 64u);
}

TEST(ValuesMaps, KeysCollidingInLowBitsStayDistinct) {
  TestState st = makeState({array("a", {KeyKind::Long}, ValueKind::Long)});
  sonde_map *a = st.map("a");
  for (int64_t i = 0; i < 2048; ++i) {
    sonde_key k[] = {L(i << 32)};
    ASSERT_EQ(sonde_map_set_long(a, k, i), SONDE_OK);
  }
  for (int64_t i = 0; i < 2048; i += 2) {
    sonde_key k[] = {L(i << 32)};
    sonde_map_delete(a, k);
  }
  for (int64_t i = 0; i < 2048; ++i) {
    sonde_key k[] = {L(i << 32)};
    EXPECT_EQ(sonde_map_get_long(a, k), i % 2 ? i : 0);
  }
  EXPECT_LT(probeDistances(a).first, 2.0);
}

TEST(ValuesMaps, StatsValues) {
  GlobalDesc d = array("lat", {KeyKind::String}, ValueKind::Stats);
  d.hist = HistKind::Log;
  TestState st = makeState({d});
  sonde_map *m = st.map("lat");
  sonde_key read[] = {S("read")}, none[] = {S("none")};
  for (int64_t v : {5, 1, 9})
    ASSERT_EQ(sonde_map_stats_add(m, read, v), SONDE_OK);
  int64_t out = -1;
  EXPECT_EQ(sonde_map_stats_extract(m, read, SONDE_STAT_COUNT, &out), SONDE_OK);
  EXPECT_EQ(out, 3);
  EXPECT_EQ(sonde_map_stats_extract(m, read, SONDE_STAT_SUM, &out), SONDE_OK);
  EXPECT_EQ(out, 15);
  EXPECT_EQ(sonde_map_stats_extract(m, read, SONDE_STAT_MIN, &out), SONDE_OK);
  EXPECT_EQ(out, 1);
  EXPECT_EQ(sonde_map_stats_extract(m, read, SONDE_STAT_MAX, &out), SONDE_OK);
  EXPECT_EQ(out, 9);
  EXPECT_EQ(sonde_map_stats_extract(m, read, SONDE_STAT_AVG, &out), SONDE_OK);
  EXPECT_EQ(out, 5);
  // A missing key: @count and @sum are 0, the others are an empty aggregate.
  EXPECT_EQ(sonde_map_stats_extract(m, none, SONDE_STAT_COUNT, &out), SONDE_OK);
  EXPECT_EQ(out, 0);
  EXPECT_EQ(sonde_map_stats_extract(m, none, SONDE_STAT_SUM, &out), SONDE_OK);
  EXPECT_EQ(out, 0);
  EXPECT_EQ(sonde_map_stats_extract(m, none, SONDE_STAT_MAX, &out), SONDE_ERR_EMPTY_AGGREGATE);
  EXPECT_EQ(sonde_map_exists(m, none), 0);
  // @hist_log(lat["read"])[67] counts 5 (4 <= 5 < 8) and 9 lands in bucket 68.
  EXPECT_EQ(sonde_map_stats_bucket(m, read, 67, &out), SONDE_OK);
  EXPECT_EQ(out, 1);
  EXPECT_EQ(sonde_map_stats_bucket(m, read, 68, &out), SONDE_OK);
  EXPECT_EQ(out, 1);
  EXPECT_EQ(sonde_map_stats_bucket(m, read, 128, &out), SONDE_ERR_HIST_INDEX);
  EXPECT_EQ(sonde_map_stats_bucket(m, none, 1, &out), SONDE_ERR_EMPTY_AGGREGATE);
  sonde_stat_summary s;
  EXPECT_EQ(sonde_map_stats_summary(m, read, &s), SONDE_OK);
  EXPECT_EQ(s.bucket_count, 128u);
  EXPECT_EQ(s.buckets[65], 1);
}

} // namespace
} // namespace sonde::values::test
