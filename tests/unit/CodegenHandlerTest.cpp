// Compiled handlers run directly on a fresh segment (no session): the language's
// computations, checked through the globals they leave behind.
#include "CodegenTestSupport.h"

#include <gtest/gtest.h>

#include <cstring>
#include <thread>

namespace sonde::test {
namespace {

// Compiles `script`, runs its first probe once and returns the harness.
struct Ran {
  std::unique_ptr<CompiledModule> module;
  std::unique_ptr<HandlerHarness> h;
  int32_t error = -1;
};
Ran runFirstProbe(const std::string &script, const codegen::CodegenOptions &opts = {}) {
  Ran r;
  r.module = CompiledModule::compile(script, opts);
  if (!r.module->ok()) {
    ADD_FAILURE() << r.module->diagnostics();
    return r;
  }
  r.h = std::make_unique<HandlerHarness>(*r.module);
  r.error = r.h->run(0);
  return r;
}

TEST(CodegenHandler, LongArithmeticWrapsAndMasksShifts) {
  Ran r = runFirstProbe(R"(
global wrap, shl, sar, shr, mask, quot, rem, minDiv, minMod, neg, bits
probe begin {
  wrap = 9223372036854775807 + 1
  shl = 1 << 65
  sar = -16 >> 2
  shr = -16 >>> 60
  mask = 5 << -63
  quot = -7 / 2
  rem = -7 % 3
  minDiv = -9223372036854775808 / -1
  minMod = -9223372036854775808 % -1
  neg = -(-9223372036854775808)
  bits = (~0 ^ 0xff) & 0xfff | 1
}
)");
  ASSERT_EQ(r.error, 0);
  EXPECT_EQ(r.h->longGlobal("wrap"), INT64_MIN);
  EXPECT_EQ(r.h->longGlobal("shl"), 2);
  EXPECT_EQ(r.h->longGlobal("sar"), -4);
  EXPECT_EQ(r.h->longGlobal("shr"), 15);
  EXPECT_EQ(r.h->longGlobal("mask"), 10); // -63 & 63 = 1
  EXPECT_EQ(r.h->longGlobal("quot"), -3);
  EXPECT_EQ(r.h->longGlobal("rem"), -1);
  EXPECT_EQ(r.h->longGlobal("minDiv"), INT64_MIN);
  EXPECT_EQ(r.h->longGlobal("minMod"), 0);
  EXPECT_EQ(r.h->longGlobal("neg"), INT64_MIN);
  EXPECT_EQ(r.h->longGlobal("bits"), 0xf01);
}

TEST(CodegenHandler, ComparisonsLogicAndTernary) {
  Ran r = runFirstProbe(R"(
global cmp, strcmp, logic, calls, pick, spick
function touch() { calls++; return 1 }
probe begin {
  cmp = (1 < 2) + (2 <= 2) * 10 + (3 > 4) * 100 + (-1 >= -1) * 1000 + (5 != 5) * 10000
  strcmp = ("abc" < "abd") + ("b" > "abc") * 10 + ("x" == "x") * 100 + ("" != "") * 1000
  logic = (0 && touch()) + (1 || touch()) * 10 + (2 && 3) * 100 + !7 * 1000 + !0 * 10000
  pick = calls ? 5 : 6
  spick = strlen(calls == 0 ? "zero" : "more")
}
)");
  ASSERT_EQ(r.error, 0);
  EXPECT_EQ(r.h->longGlobal("cmp"), 1011);
  EXPECT_EQ(r.h->longGlobal("strcmp"), 111);
  EXPECT_EQ(r.h->longGlobal("logic"), 10110);
  EXPECT_EQ(r.h->longGlobal("calls"), 0); // short-circuit: touch() never ran
  EXPECT_EQ(r.h->longGlobal("pick"), 6);
  EXPECT_EQ(r.h->longGlobal("spick"), 4);
}

TEST(CodegenHandler, StringsTruncateAtMaxStringLen) {
  codegen::CodegenOptions opts;
  ASSERT_FALSE(codegen::applyLimitDefines({{"MAXSTRINGLEN", "8"}}, opts));
  Ran r = runFirstProbe(R"(
global lit, cat, app, self, key, n
probe begin {
  lit = "0123456789"
  cat = "abc" . "defghij"
  app = "xy"; app .= "z"; app .= "0123456789"
  self = "ab"; self = self . self . self . self
  a["0123456789"] = 1
  foreach (k in a) key = k
  n = strlen(cat . cat)
}
global a
)",
                        opts);
  ASSERT_EQ(r.error, 0);
  EXPECT_EQ(r.h->stringGlobal("lit"), "0123456");
  EXPECT_EQ(r.h->stringGlobal("cat"), "abcdefg");
  EXPECT_EQ(r.h->stringGlobal("app"), "xyz0123");
  EXPECT_EQ(r.h->stringGlobal("self"), "abababa");
  EXPECT_EQ(r.h->stringGlobal("key"), "0123456");
  EXPECT_EQ(r.h->longGlobal("n"), 7);
}

TEST(CodegenHandler, AssignmentOperatorsAndIncrements) {
  Ran r = runFirstProbe(R"(
global x, pre, post, e, a
probe begin {
  x = 10; x += 5; x -= 3; x *= 4; x /= 5; x %= 7; x <<= 4; x >>= 1; x &= 0x3c; x |= 1; x ^= 3
  pre = ++x; post = x++
  e = (x = 7) + 1
  a[1] = 5; a[1] += 2; a[1] *= 3; a[1]--; a[2]++; ++a[2]; a[3] = a[1]++ + 100
}
)");
  ASSERT_EQ(r.error, 0);
  // 10+5-3=12, *4=48, /5=9, %7=2, <<4=32, >>1=16, &0x3c=16, |1=17, ^3=18
  EXPECT_EQ(r.h->longGlobal("pre"), 19);
  EXPECT_EQ(r.h->longGlobal("post"), 19);
  EXPECT_EQ(r.h->longGlobal("x"), 7);
  EXPECT_EQ(r.h->longGlobal("e"), 8);
  sonde_key k1{}, k2{}, k3{};
  k1.l = 1, k2.l = 2, k3.l = 3;
  EXPECT_EQ(r.h->mapLong("a", {k1}), 21); // (5+2)*3-1 = 20, then ++ after the read
  EXPECT_EQ(r.h->mapLong("a", {k2}), 2);
  EXPECT_EQ(r.h->mapLong("a", {k3}), 120);
}

TEST(CodegenHandler, LoopsBreakContinueAndLocalsStartFresh) {
  auto m = CompiledModule::compile(R"(
global sum, odd, runs, fresh
probe begin {
  fresh += local   # a local starts at 0 on every run
  local = 5
  for (i = 0; ; i++) { if (i > 20) break; if (i % 2) continue; sum += i }
  j = 0
  while (j < 9) { j++; if (j == 3) continue; odd += j }
  runs++
}
)");
  ASSERT_TRUE(m->ok()) << m->diagnostics();
  HandlerHarness h(*m);
  ASSERT_EQ(h.run(0), 0);
  ASSERT_EQ(h.run(0), 0);
  EXPECT_EQ(h.longGlobal("sum"), 2 * 110);
  EXPECT_EQ(h.longGlobal("odd"), 2 * (45 - 3));
  EXPECT_EQ(h.longGlobal("runs"), 2);
  EXPECT_EQ(h.longGlobal("fresh"), 0);
}

TEST(CodegenHandler, FunctionsRecurseReturnStringsAndChain) {
  Ran r = runFirstProbe(R"(
global fact, built, chain, byValue, voided
function f(n) { return n <= 1 ? 1 : n * f(n - 1) }  # 10 deep: within MAXNESTING 1 + 10
function build:string(s:string, n) { if (n == 0) return s; return build(s . "ab", n - 1) }
function kind:string(n) { if (n < 0) return "negative"; next }
function kind:string(n) { if (n == 0) return "zero"; next }
function kind:string(n) { return "positive" }
function change(s:string, n) { s = "changed"; n = 99; return strlen(s) + n }
function nothing() { voided = 1 }
probe begin {
  fact = f(10)
  built = build("", 3)
  chain = kind(-4) . "," . kind(0) . "," . kind(8)
  str = "kept"; num = 1
  byValue = change(str, num) * 1000 + strlen(str) * 10 + num
  nothing()
}
)");
  ASSERT_EQ(r.error, 0);
  EXPECT_EQ(r.h->longGlobal("fact"), 3628800);
  EXPECT_EQ(r.h->stringGlobal("built"), "ababab");
  EXPECT_EQ(r.h->stringGlobal("chain"), "negative,zero,positive");
  EXPECT_EQ(r.h->longGlobal("byValue"), 106 * 1000 + 41);
  EXPECT_EQ(r.h->longGlobal("voided"), 1);
}

TEST(CodegenHandler, ArraysInDeleteAndWildcards) {
  Ran r = runFirstProbe(R"(
global a, found, count
probe begin {
  a[1, "x"] = 1; a[2, "x"] = 2; a[1, "y"] = 3; a[2, "y"] = 4
  found = [1, "x"] in a
  found = found * 10 + ([3, "x"] in a)
  found = found * 10 + ([*, "y"] in a)
  found = found * 10 + ([3, *] in a)
  delete a[*, "x"]
  count = 0
  foreach ([n, s] in a) count++
  delete a[1, "y"]
  found = found * 10 + ([1, "y"] in a)
  missing = a[9, "z"]       # reading does not create
  found = found * 10 + ([9, "z"] in a)
}
)");
  ASSERT_EQ(r.error, 0);
  EXPECT_EQ(r.h->longGlobal("found"), 101000);
  EXPECT_EQ(r.h->longGlobal("count"), 2);
  EXPECT_EQ(r.h->mapCount("a"), 1u);
}

TEST(CodegenHandler, ForeachSortsSlicesLimitsAndValues) {
  Ran r = runFirstProbe(R"(
global a, s, asc, desc, byKey, sliced, limited, limitCalls, values
function lim() { limitCalls++; return 2 }
probe begin {
  a[3] = 30; a[1] = 10; a[2] = 20; a[4] = 5
  foreach (k in a) asc = asc * 10 + k                 # insertion order
  foreach (v = k in a-) desc = desc * 100 + v         # by value, descending
  foreach (k- in a) byKey = byKey * 10 + k
  foreach (k+ in a limit lim()) limited = limited * 10 + k
  s["b", 1] = 1; s["a", 2] = 2; s["b", 3] = 3
  foreach ([x, y] in s["b", *]) sliced = sliced * 10 + y
  foreach ([x, y+] in s) values = values . x
}
)");
  ASSERT_EQ(r.error, 0);
  EXPECT_EQ(r.h->longGlobal("asc"), 3124);
  EXPECT_EQ(r.h->longGlobal("desc"), 30201005);
  EXPECT_EQ(r.h->longGlobal("byKey"), 4321);
  EXPECT_EQ(r.h->longGlobal("limited"), 12);
  EXPECT_EQ(r.h->longGlobal("limitCalls"), 1); // evaluated once
  EXPECT_EQ(r.h->longGlobal("sliced"), 13);
  EXPECT_EQ(r.h->stringGlobal("values"), "bab");
}

TEST(CodegenHandler, NestedForeachLeftByBreakAndReturn) {
  // Leaving loops early must end their snapshots, or the next loop would fail.
  Ran r = runFirstProbe(R"(
global a, hits, after
function firstOver(n) { foreach (k+ in a) foreach (j+ in a) if (k * j > n) return k * j; return 0 }
probe begin {
  for (i = 1; i <= 5; i++) a[i] = i
  for (round = 0; round < 50; round++) {
    foreach (k in a) { foreach (j in a) { if (j == 2) break; hits++ } if (k == 3) break }
    after += firstOver(6)
  }
}
)");
  ASSERT_EQ(r.error, 0);
  EXPECT_EQ(r.h->longGlobal("hits"), 50 * 3);
  EXPECT_EQ(r.h->longGlobal("after"), 50 * 8);
}

TEST(CodegenHandler, StatsExtractorsBucketsAndDelete) {
  Ran r = runFirstProbe(R"(
global st, arr, c, sum, mn, mx, avg, bucket, inHist, buckets, cleared
probe begin {
  for (i = 1; i <= 10; i++) { st <<< i; arr[i % 2] <<< i * 10 }
  c = @count(st); sum = @sum(st); mn = @min(st); mx = @max(st); avg = @avg(st)
  bucket = @hist_linear(st, 0, 10, 2)[1]      # values 0..1
  inHist = (3 in @hist_linear(st, 0, 10, 2)) * 10 + (0 in @hist_linear(st, 0, 10, 2))
  foreach (b in @hist_log(arr[1])) if (@hist_log(arr[1])[b]) buckets++
  delete arr
  cleared = @count(arr[0])
}
)");
  ASSERT_EQ(r.error, 0);
  EXPECT_EQ(r.h->longGlobal("c"), 10);
  EXPECT_EQ(r.h->longGlobal("sum"), 55);
  EXPECT_EQ(r.h->longGlobal("mn"), 1);
  EXPECT_EQ(r.h->longGlobal("mx"), 10);
  EXPECT_EQ(r.h->longGlobal("avg"), 5);
  EXPECT_EQ(r.h->longGlobal("bucket"), 1);
  EXPECT_EQ(r.h->longGlobal("inHist"), 10); // bucket 3 holds 4 and 5; bucket 0 (< 0) is empty
  EXPECT_EQ(r.h->longGlobal("buckets"), 4); // 10 | 30 | 50 | 70, 90
  EXPECT_EQ(r.h->longGlobal("cleared"), 0);
  EXPECT_EQ(r.h->stat("st", SONDE_STAT_COUNT), 10);
}

// As in stap, a foreach value variable cannot hold statistics: extractors take the
// array element instead (`@sum(arr[k])`).
TEST(CodegenHandler, ForeachValueOverStatsIsRejectedLikeStap) {
  auto m = CompiledModule::compile(R"(
global arr, perKey
probe begin {
  arr[1] <<< 10
  foreach (v = k+ in arr) { perKey = @sum(v) }
}
)");
  EXPECT_FALSE(m->ok());
  EXPECT_NE(m->diagnostics().find("invalid type stats"), std::string::npos) << m->diagnostics();
}

TEST(CodegenHandler, ForeachOverStatsUsesTheElement) {
  Ran r = runFirstProbe(R"(
global arr, perKey, counts
probe begin {
  for (i = 1; i <= 10; i++) arr[i % 2] <<< i * 10
  foreach (k+ in arr) { perKey = perKey * 1000 + @sum(arr[k]); counts = counts * 10 + @count(arr[k]) }
}
)");
  ASSERT_EQ(r.error, 0);
  EXPECT_EQ(r.h->longGlobal("perKey"), 300250); // evens 300, odds 250
  EXPECT_EQ(r.h->longGlobal("counts"), 55);
}

TEST(CodegenHandler, DeleteScalarsAndDefined) {
  Ran r = runFirstProbe(R"(
global n, s, st, defined
probe begin {
  n = 5; s = "x"; st <<< 3
  delete n; delete s; delete st
  defined = @defined($nothing) * 10 + @defined(n)
}
)");
  ASSERT_EQ(r.error, 0);
  EXPECT_EQ(r.h->longGlobal("n"), 0);
  EXPECT_EQ(r.h->stringGlobal("s"), "");
  EXPECT_EQ(r.h->stat("st", SONDE_STAT_COUNT), 0);
  EXPECT_EQ(r.h->longGlobal("defined"), 1);
}

TEST(CodegenHandler, TimerHandlersRunOnlyWhileTheSessionRuns) {
  auto m = CompiledModule::compile("global n; probe timer.ms(10) { n++ }");
  ASSERT_TRUE(m->ok()) << m->diagnostics();
  HandlerHarness h(*m);
  ASSERT_EQ(h.run(0), 0);
  EXPECT_EQ(h.longGlobal("n"), 0); // the segment starts in STARTING
  sonde_session_set_state(h.segment().abi(), SONDE_SESSION_RUNNING);
  ASSERT_EQ(h.run(0), 0);
  EXPECT_EQ(h.longGlobal("n"), 1);
}

TEST(CodegenHandler, HandlerIsSkippedWhenItsLocksAreHeld) {
  codegen::CodegenOptions opts;
  ASSERT_FALSE(codegen::applyLimitDefines({{"MAXTRYLOCK", "2"}, {"TRYLOCKDELAY", "1"}}, opts));
  auto m = CompiledModule::compile("global n, other; probe begin { n++; other = n }", opts);
  ASSERT_TRUE(m->ok()) << m->diagnostics();
  HandlerHarness h(*m);
  uint64_t offsets[] = {h.offsetOf("n"), h.offsetOf("other")};
  ASSERT_EQ(sonde_locks_take(h.segment().abi(), offsets, 2), SONDE_OK);
  std::thread([&] { EXPECT_EQ(h.run(0), 0); }).join();
  EXPECT_EQ(h.longGlobal("n"), 0);
  EXPECT_EQ(sonde_session_skipped_count(h.segment().abi()), 1u);
  sonde_locks_release(h.segment().abi(), offsets, 2);
  std::thread([&] { EXPECT_EQ(h.run(0), 0); }).join();
  EXPECT_EQ(h.longGlobal("n"), 1);
  // The handler released what it took: the locks are free again.
  EXPECT_EQ(sonde_locks_take(h.segment().abi(), offsets, 2), SONDE_OK);
  sonde_locks_release(h.segment().abi(), offsets, 2);
}

TEST(CodegenHandler, ProbeConditionGatesTheHandler) {
  auto m = CompiledModule::compile(R"(
global enabled, n
probe begin if (enabled) { n++ }
)");
  ASSERT_TRUE(m->ok()) << m->diagnostics();
  HandlerHarness h(*m);
  ASSERT_EQ(h.run(0), 0);
  EXPECT_EQ(h.longGlobal("n"), 0);
  int64_t one = 1;
  std::memcpy(static_cast<char *>(h.segment().base()) +
                  m->layout().placements()[m->layout().find("enabled")].dataOffset,
              &one, sizeof one);
  ASSERT_EQ(h.run(0), 0);
  EXPECT_EQ(h.longGlobal("n"), 1);
}

} // namespace
} // namespace sonde::test
