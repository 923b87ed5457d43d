// The end-of-run dump of written-but-never-read globals, in the format of
// stap's synthesized end probes (elaborate.cxx, add_global_var_display).
#include "runtime/format/FormatAbi.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

SondeValue num(int64_t v) { return SondeValue{SONDE_VALUE_LONG, v, nullptr}; }
SondeValue str(const char *s) { return SondeValue{SONDE_VALUE_STRING, 0, s}; }

std::string dump(SondeDumpGlobal &g) {
  sonde_dump_sort(&g);
  std::string all;
  char line[SONDE_PRINT_BUFFER_SIZE];
  for (size_t i = 0; i < sonde_dump_line_count(&g); ++i)
    all.append(line, sonde_dump_line(&g, i, line, sizeof line));
  return all;
}

TEST(FormatGlobalDump, Scalars) {
  SondeDumpEntry e{};
  e.value = num(-5);
  SondeDumpGlobal g{"x", SONDE_DUMP_LONG, 0, &e, 1};
  EXPECT_EQ(dump(g), "x=-5\n");
  e.value = str("hi\tthere\"q");
  g = SondeDumpGlobal{"s", SONDE_DUMP_STRING, 0, &e, 1};
  EXPECT_EQ(dump(g), "s=\"hi\tthere\"q\"\n"); // %#s does not escape
}

TEST(FormatGlobalDump, ScalarStats) {
  SondeDumpEntry e{};
  e.stats = SondeStatsSummary{3, -13, -10, 1};
  SondeDumpGlobal g{"st", SONDE_DUMP_STATS, 0, &e, 1};
  // @avg is C division: -13 / 3 = -4.
  EXPECT_EQ(dump(g), "st @count=3 @min=-10 @max=1 @sum=-13 @avg=-4\n");
  e.stats = SondeStatsSummary{};
  EXPECT_EQ(dump(g), "st @count=0x0\n");
}

TEST(FormatGlobalDump, ArraysSortByValueDescending) {
  const SondeValue k1[] = {num(1), str("k")};
  const SondeValue k2[] = {num(2), str("z")};
  const SondeValue k3[] = {num(-3), str("")};
  std::vector<SondeDumpEntry> entries(3);
  entries[0].keys = k1;
  entries[0].value = num(5);
  entries[1].keys = k2;
  entries[1].value = num(7);
  entries[2].keys = k3;
  entries[2].value = num(5);
  SondeDumpGlobal g{"a", SONDE_DUMP_LONG, 2, entries.data(), entries.size()};
  // Ties keep their order.
  EXPECT_EQ(dump(g), "a[2,\"z\"]=7\na[1,\"k\"]=5\na[-3,\"\"]=5\n");
}

TEST(FormatGlobalDump, StringArraysSortByStrcmp) {
  const SondeValue k[] = {str("one"), str("two"), str("three")};
  std::vector<SondeDumpEntry> entries(3);
  const char *values[] = {"apple", "pear", "fig"};
  for (size_t i = 0; i < 3; ++i) {
    entries[i].keys = &k[i];
    entries[i].value = str(values[i]);
  }
  SondeDumpGlobal g{"fruit", SONDE_DUMP_STRING, 1, entries.data(), entries.size()};
  EXPECT_EQ(dump(g),
            "fruit[\"two\"]=\"pear\"\nfruit[\"three\"]=\"fig\"\nfruit[\"one\"]=\"apple\"\n");
}

TEST(FormatGlobalDump, StatsArraysSortByCount) {
  const SondeValue k[] = {str("read"), str("write")};
  std::vector<SondeDumpEntry> entries(2);
  entries[0].keys = &k[0];
  entries[0].stats = SondeStatsSummary{2, 30, 10, 20};
  entries[1].keys = &k[1];
  entries[1].stats = SondeStatsSummary{4, 4, 1, 1};
  SondeDumpGlobal g{"lat", SONDE_DUMP_STATS, 1, entries.data(), entries.size()};
  EXPECT_EQ(dump(g), "lat[\"write\"] @count=4 @min=1 @max=1 @sum=4 @avg=1\n"
                     "lat[\"read\"] @count=2 @min=10 @max=20 @sum=30 @avg=15\n");
}

TEST(FormatGlobalDump, SortIsStableOnLargeArrays) {
  // Enough entries to exercise the merging; values repeat so ties abound.
  const size_t n = 1000;
  std::vector<SondeValue> keys(n);
  std::vector<SondeDumpEntry> entries(n);
  for (size_t i = 0; i < n; ++i) {
    keys[i] = num(static_cast<int64_t>(i));
    entries[i].keys = &keys[i];
    entries[i].value = num(static_cast<int64_t>((i * 7919) % 13));
  }
  SondeDumpGlobal g{"a", SONDE_DUMP_LONG, 1, entries.data(), entries.size()};
  sonde_dump_sort(&g);
  for (size_t i = 1; i < n; ++i) {
    const SondeDumpEntry &a = entries[i - 1];
    const SondeDumpEntry &b = entries[i];
    ASSERT_GE(a.value.i, b.value.i) << i;
    if (a.value.i == b.value.i)
      ASSERT_LT(a.keys[0].i, b.keys[0].i) << i;
  }
}

TEST(FormatGlobalDump, LinesStopAtTheBuffer) {
  SondeDumpEntry e{};
  e.value = num(123456);
  SondeDumpGlobal g{"counter", SONDE_DUMP_LONG, 0, &e, 1};
  char line[10]; // a stream line: raw bytes, no NUL
  EXPECT_EQ(std::string(line, sonde_dump_line(&g, 0, line, sizeof line)), "counter=12");
  EXPECT_EQ(sonde_dump_line(&g, 1, line, sizeof line), 0u);
}

} // namespace
