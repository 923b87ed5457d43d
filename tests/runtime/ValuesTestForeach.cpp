// foreach snapshots: stap's orders (insertion order, stable sorts), limit, slices.
#include "ValuesTestSupport.h"

#include <algorithm>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace sonde::values::test {
namespace {

sonde_foreach_spec spec(int32_t column, bool descending = false, int64_t limit = SONDE_NO_LIMIT,
                        int32_t extractor = SONDE_STAT_COUNT) {
  return sonde_foreach_spec{column, descending ? 1 : 0, extractor, 0, limit, nullptr};
}

std::vector<int64_t> longKeys(sonde_map *m, const sonde_foreach_spec &s) {
  sonde_iter it;
  EXPECT_EQ(sonde_foreach_begin(m, &s, &it), SONDE_OK);
  std::vector<int64_t> keys;
  while (sonde_foreach_next(&it))
    keys.push_back(sonde_iter_key_long(&it, 1));
  sonde_foreach_end(&it);
  return keys;
}

void setLong(sonde_map *m, int64_t key, int64_t value) {
  sonde_key k[] = {L(key)};
  ASSERT_EQ(sonde_map_set_long(m, k, value), SONDE_OK);
}

using Keys = std::vector<int64_t>;

TEST(ValuesForeach, UnsortedIsInsertionOrder) {
  TestState st = makeState({array("a", {KeyKind::Long}, ValueKind::Long)});
  sonde_map *a = st.map("a");
  for (int64_t k : {5, 3, 9, 1, 7})
    setLong(a, k, 1);
  EXPECT_EQ(longKeys(a, spec(SONDE_SORT_NONE)), (Keys{5, 3, 9, 1, 7}));
  // Deleting and re-inserting makes a key the newest; updating does not.
  sonde_key three[] = {L(3)};
  sonde_map_delete(a, three);
  setLong(a, 9, 2);
  setLong(a, 3, 1);
  EXPECT_EQ(longKeys(a, spec(SONDE_SORT_NONE)), (Keys{5, 9, 1, 7, 3}));
  EXPECT_EQ(longKeys(a, spec(SONDE_SORT_NONE, false, 2)), (Keys{5, 9}));
}

TEST(ValuesForeach, ValueSortsAreStableInBothDirections) {
  TestState st = makeState({array("a", {KeyKind::Long}, ValueKind::Long)});
  sonde_map *a = st.map("a");
  // The script stap-ref answers in BPF hash order; the kernel runtime's stable
  // merge sort over insertion order gives these.
  setLong(a, 5, 1);
  setLong(a, 3, 2);
  setLong(a, 9, 1);
  setLong(a, 1, 2);
  setLong(a, 7, 1);
  EXPECT_EQ(longKeys(a, spec(SONDE_SORT_VALUE, true)), (Keys{3, 1, 5, 9, 7}));
  EXPECT_EQ(longKeys(a, spec(SONDE_SORT_VALUE, false)), (Keys{5, 9, 7, 3, 1}));
  EXPECT_EQ(longKeys(a, spec(SONDE_SORT_VALUE, false, 2)), (Keys{5, 9}));
  EXPECT_EQ(longKeys(a, spec(SONDE_SORT_VALUE, true, 3)), (Keys{3, 1, 5}));
  EXPECT_EQ(longKeys(a, spec(1, false)), (Keys{1, 3, 5, 7, 9}));
  EXPECT_EQ(longKeys(a, spec(1, true)), (Keys{9, 7, 5, 3, 1}));
  // Sorting never reorders the array itself.
  EXPECT_EQ(longKeys(a, spec(SONDE_SORT_NONE)), (Keys{5, 3, 9, 1, 7}));
}

TEST(ValuesForeach, LimitZeroOrNegativeVisitsNothing) {
  TestState st = makeState({array("a", {KeyKind::Long}, ValueKind::Long)});
  sonde_map *a = st.map("a");
  setLong(a, 1, 1);
  EXPECT_TRUE(longKeys(a, spec(SONDE_SORT_NONE, false, 0)).empty());
  EXPECT_TRUE(longKeys(a, spec(SONDE_SORT_VALUE, false, -1)).empty());
  EXPECT_EQ(longKeys(a, spec(SONDE_SORT_VALUE, false, 5)), (Keys{1}));
}

TEST(ValuesForeach, SortByStringColumnsAndValues) {
  TestState st = makeState({array("a", {KeyKind::Long, KeyKind::String}, ValueKind::String)});
  sonde_map *a = st.map("a");
  struct Row {
    int64_t n;
    const char *name;
    const char *value;
  };
  Row rows[] = {{1, "pear", "b"}, {2, "apple", "c"}, {3, "Zebra", "a"}, {4, "apple", "a"}};
  for (const Row &r : rows) {
    sonde_key k[] = {L(r.n), S(r.name)};
    ASSERT_EQ(sonde_map_set_string(a, k, r.value), SONDE_OK);
  }
  auto walk = [&](sonde_foreach_spec s) {
    std::vector<std::string> out;
    sonde_iter it;
    EXPECT_EQ(sonde_foreach_begin(a, &s, &it), SONDE_OK);
    while (sonde_foreach_next(&it))
      out.push_back(std::to_string(sonde_iter_key_long(&it, 1)) + sonde_iter_key_string(&it, 2) +
                    "=" + sonde_iter_value_string(&it));
    sonde_foreach_end(&it);
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(walk(spec(2)), (V{"3Zebra=a", "2apple=c", "4apple=a", "1pear=b"}));
  EXPECT_EQ(walk(spec(2, true)), (V{"1pear=b", "2apple=c", "4apple=a", "3Zebra=a"}));
  EXPECT_EQ(walk(spec(SONDE_SORT_VALUE)), (V{"3Zebra=a", "4apple=a", "1pear=b", "2apple=c"}));
  EXPECT_EQ(walk(spec(1, true, 1)), (V{"4apple=a"}));
}

TEST(ValuesForeach, SlicesFilterFixedColumns) {
  TestState st = makeState({array("a", {KeyKind::Long, KeyKind::Long}, ValueKind::Long)});
  sonde_map *a = st.map("a");
  for (int64_t i = 0; i < 6; ++i)
    for (int64_t j = 0; j < 3; ++j) {
      sonde_key k[] = {L(i), L(j)};
      sonde_map_set_long(a, k, i * 10 + j);
    }
  sonde_key slice[] = {L(0), L(2)}; // a[*, 2]
  sonde_foreach_spec s = spec(SONDE_SORT_VALUE, true);
  s.slice = slice;
  s.slice_wild = 0b01;
  sonde_iter it;
  ASSERT_EQ(sonde_foreach_begin(a, &s, &it), SONDE_OK);
  std::vector<int64_t> values;
  while (sonde_foreach_next(&it)) {
    EXPECT_EQ(sonde_iter_key_long(&it, 2), 2);
    values.push_back(sonde_iter_value_long(&it));
  }
  sonde_foreach_end(&it);
  EXPECT_EQ(values, (Keys{52, 42, 32, 22, 12, 2}));
  // As in stap, `limit` counts visited entries before the slice test: the three
  // largest values are 52, 51, 50, of which only 52 is in a[*, 2].
  auto sliced = [&](int32_t column, int64_t limit) {
    s.sort_column = column;
    s.limit = limit;
    EXPECT_EQ(sonde_foreach_begin(a, &s, &it), SONDE_OK);
    Keys got;
    while (sonde_foreach_next(&it))
      got.push_back(sonde_iter_value_long(&it));
    sonde_foreach_end(&it);
    return got;
  };
  EXPECT_EQ(sliced(SONDE_SORT_VALUE, 3), (Keys{52}));
  EXPECT_EQ(sliced(SONDE_SORT_NONE, 2), (Keys{}));
  EXPECT_EQ(sliced(SONDE_SORT_NONE, 6), (Keys{2, 12}));
}

TEST(ValuesForeach, StatsValuesSortByTheirExtractor) {
  TestState st = makeState({array("s", {KeyKind::Long}, ValueKind::Stats)});
  sonde_map *m = st.map("s");
  auto add = [&](int64_t key, std::initializer_list<int64_t> values) {
    sonde_key k[] = {L(key)};
    for (int64_t v : values)
      ASSERT_EQ(sonde_map_stats_add(m, k, v), SONDE_OK);
  };
  add(1, {100});        // count 1, sum 100, avg 100
  add(2, {1, 1, 1, 1}); // count 4, sum 4, avg 1
  add(3, {10, 20, 30}); // count 3, sum 60, avg 20
  EXPECT_EQ(longKeys(m, spec(SONDE_SORT_VALUE, true, SONDE_NO_LIMIT, SONDE_STAT_COUNT)),
            (Keys{2, 3, 1}));
  EXPECT_EQ(longKeys(m, spec(SONDE_SORT_VALUE, true, SONDE_NO_LIMIT, SONDE_STAT_SUM)),
            (Keys{1, 3, 2}));
  EXPECT_EQ(longKeys(m, spec(SONDE_SORT_VALUE, false, SONDE_NO_LIMIT, SONDE_STAT_AVG)),
            (Keys{2, 3, 1}));
  EXPECT_EQ(longKeys(m, spec(SONDE_SORT_VALUE, false, SONDE_NO_LIMIT, SONDE_STAT_MIN)),
            (Keys{2, 3, 1}));
  sonde_foreach_spec s = spec(SONDE_SORT_NONE);
  sonde_iter it;
  ASSERT_EQ(sonde_foreach_begin(m, &s, &it), SONDE_OK);
  ASSERT_EQ(sonde_foreach_next(&it), 1);
  ASSERT_EQ(sonde_foreach_next(&it), 1);
  int64_t v = 0;
  EXPECT_EQ(sonde_iter_stats_extract(&it, SONDE_STAT_SUM, &v), SONDE_OK);
  EXPECT_EQ(v, 4);
  sonde_stat_summary summary;
  EXPECT_EQ(sonde_iter_stats_summary(&it, &summary), SONDE_OK);
  EXPECT_EQ(summary.count, 4);
  sonde_foreach_end(&it);
}

TEST(ValuesForeach, NestedLoopsAndLargeSortsMatchAStableSort) {
  TestState st = makeState({array("a", {KeyKind::Long}, ValueKind::Long)});
  sonde_map *a = st.map("a");
  std::mt19937_64 rng(7);
  std::vector<std::pair<int64_t, int64_t>> rows; // (key, value) in insertion order
  for (int64_t k = 0; k < 2048; ++k) {
    int64_t key = static_cast<int64_t>(rng() % 1'000'000) * 4096 + k;
    int64_t value = static_cast<int64_t>(rng() % 50) - 25;
    rows.emplace_back(key, value);
    setLong(a, key, value);
  }
  // A stable descending sort (std::stable_sort's buffer API is deprecated in C++20).
  std::vector<size_t> order(rows.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    return rows[x].second != rows[y].second ? rows[x].second > rows[y].second : x < y;
  });
  Keys expectedKeys;
  for (size_t i : order)
    expectedKeys.push_back(rows[i].first);
  sonde_foreach_spec outer = spec(SONDE_SORT_VALUE, true);
  sonde_foreach_spec inner = spec(SONDE_SORT_VALUE, true, 10);
  for (int round = 0; round < 50; ++round) {
    sonde_iter it;
    ASSERT_EQ(sonde_foreach_begin(a, &outer, &it), SONDE_OK);
    Keys got;
    while (sonde_foreach_next(&it)) {
      got.push_back(sonde_iter_key_long(&it, 1));
      if (got.size() % 512 == 1) { // an inner loop over the same array
        Keys top = longKeys(a, inner);
        ASSERT_EQ(top, Keys(expectedKeys.begin(), expectedKeys.begin() + 10));
      }
    }
    sonde_foreach_end(&it);
    ASSERT_EQ(got, expectedKeys);
  }
  sonde_scratch_release_all();
}

} // namespace
} // namespace sonde::values::test
