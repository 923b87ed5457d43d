// Passes 3-4: the IR verifies, and the linked module exports the tables the
// runtime reads (runtime/session/ModuleAbi.h) with the right contents.
#include "CodegenTestSupport.h"

#include <gtest/gtest.h>

#include <dlfcn.h>
#include <filesystem>

namespace sonde::test {
namespace {

using codegen::CodegenOptions;

TEST(CodegenModule, IrVerifiesAndHasOneHandlerPerProbe) {
  GeneratedIr r = generateIr(R"(
global n
function twice(x) { return 2 * x }
probe begin { n = twice(21) }
probe end { printf("%d\n", n) }
)");
  ASSERT_TRUE(r.ok) << r.diagnostics;
  EXPECT_NE(r.ir.find("define internal void @probe.0(ptr"), std::string::npos);
  EXPECT_NE(r.ir.find("define internal void @probe.1(ptr"), std::string::npos);
  EXPECT_NE(r.ir.find("define internal i64 @function.twice(ptr"), std::string::npos);
  EXPECT_NE(r.ir.find("@sonde_module = constant"), std::string::npos);
}

TEST(CodegenModule, ProbeTableGivesKindOrderPeriodAndNames) {
  auto m = CompiledModule::compile(R"(
probe begin(5) { }
probe end { }
probe error(-2) { }
probe timer.ms(20).randomize(5) { }
probe timer.hz(3) { }
probe timer.s(2) { }
probe never { }
)");
  ASSERT_TRUE(m->ok()) << m->diagnostics();
  const sonde_module_desc &d = m->desc();
  EXPECT_EQ(d.abi_version, SONDE_MODULE_ABI_VERSION);
  ASSERT_EQ(d.probe_count, 6u); // `never` is not compiled
  const sonde_probe_desc *p = d.probes;
  EXPECT_EQ(p[0].kind, uint32_t{SONDE_PROBE_BEGIN});
  EXPECT_EQ(p[0].sequence, 5);
  EXPECT_STREQ(p[0].pp, "begin(5)");
  EXPECT_EQ(p[1].kind, uint32_t{SONDE_PROBE_END});
  EXPECT_EQ(p[2].kind, uint32_t{SONDE_PROBE_ERROR});
  EXPECT_EQ(p[2].sequence, -2);
  EXPECT_EQ(p[3].kind, uint32_t{SONDE_PROBE_TIMER});
  EXPECT_EQ(p[3].period_ns, 20000000);
  EXPECT_EQ(p[3].randomize_ns, 5000000);
  EXPECT_STREQ(p[3].pp, "timer.ms(20).randomize(5)");
  EXPECT_EQ(p[4].period_ns, 333333334); // ceil(1e9 / 3)
  EXPECT_EQ(p[5].period_ns, 2000000000);
  for (uint32_t i = 0; i < d.probe_count; ++i)
    EXPECT_NE(p[i].handler, nullptr);
}

TEST(CodegenModule, PnIsThePointAsWritten) {
  auto m = CompiledModule::compile("probe timer.s(1), begin { }");
  ASSERT_TRUE(m->ok()) << m->diagnostics();
  ASSERT_EQ(m->desc().probe_count, 2u);
  EXPECT_STREQ(m->desc().probes[0].pn, "timer.s(1)");
  EXPECT_STREQ(m->desc().probes[1].pn, "begin");
}

TEST(CodegenModule, LayoutCarriesGlobalsLimitsAndFingerprint) {
  CodegenOptions opts;
  ASSERT_FALSE(codegen::applyLimitDefines({{"MAXSTRINGLEN", "64"}, {"MAXMAPENTRIES", "10"}}, opts));
  auto m = CompiledModule::compile(R"(
global count, name, arr[5], st, hist
probe begin {
  count = 1; name = "x"; arr["k", 2] = "v"; st <<< 1
  hist[1] <<< 3
  print(@hist_linear(hist[1], 0, 100, 10))
  printf("%d %s %s %d\n", count, name, arr["k", 2], @variance(st, 3))
}
)",
                                   opts);
  ASSERT_TRUE(m->ok()) << m->diagnostics();
  const values::GlobalLayout &l = m->layout();
  EXPECT_EQ(l.fingerprint(), m->desc().layout_fingerprint);
  EXPECT_EQ(l.limits().max_string_len, 64u);
  EXPECT_EQ(l.limits().max_map_entries, 10u);
  ASSERT_EQ(l.globals().size(), 5u);
  const values::GlobalDesc &arr = l.globals()[l.find("arr")];
  EXPECT_EQ(arr.keyCount, 2);
  EXPECT_EQ(arr.keys[0], values::KeyKind::String);
  EXPECT_EQ(arr.keys[1], values::KeyKind::Long);
  EXPECT_EQ(arr.value, values::ValueKind::String);
  EXPECT_EQ(arr.maxEntries, 5u);
  const values::GlobalDesc &st = l.globals()[l.find("st")];
  EXPECT_EQ(st.value, values::ValueKind::Stats);
  EXPECT_TRUE(st.usesVariance);
  EXPECT_EQ(st.varianceShift, 3u);
  const values::GlobalDesc &hist = l.globals()[l.find("hist")];
  EXPECT_EQ(hist.hist, values::HistKind::Linear);
  EXPECT_EQ(hist.histHigh, 100);
  EXPECT_EQ(hist.histWidth, 10);
}

TEST(CodegenModule, FormatsAndLocationsAreTables) {
  auto m = CompiledModule::compile(R"(
global x
probe begin {
  printf("%d\n", 1); printf("%d\n", 2); printf("%s|\n", "a")
  x = 10 / x
}
)");
  ASSERT_TRUE(m->ok()) << m->diagnostics();
  const sonde_module_desc &d = m->desc();
  ASSERT_EQ(d.format_count, 2u); // one entry per distinct text
  EXPECT_STREQ(d.formats[0], "%d\n");
  EXPECT_STREQ(d.formats[1], "%s|\n");
  bool found = false;
  for (uint32_t i = 0; i < d.location_count; ++i) {
    const sonde_location &l = d.locations[i];
    if (std::string(l.kind) == "operator" && std::string(l.text) == "/") {
      found = true;
      EXPECT_STREQ(l.file, "input.probe");
      EXPECT_EQ(l.line, 5u);
      EXPECT_EQ(l.column, 10u);
    }
  }
  EXPECT_TRUE(found);
}

TEST(CodegenModule, DisplayTableListsWriteOnlyGlobals) {
  auto m = CompiledModule::compile(R"(
global shown, hidden, arr
probe begin { shown = 1; hidden = 2; arr[1] = 1 }
probe end { println(hidden) }
)");
  ASSERT_TRUE(m->ok()) << m->diagnostics();
  std::vector<std::string> names;
  for (uint32_t i = 0; i < m->desc().display_count; ++i)
    names.push_back(m->layout().globals()[m->desc().display[i].layout_index].name);
  EXPECT_EQ(names, (std::vector<std::string>{"shown", "arr"}));

  CodegenOptions quiet;
  quiet.displayGlobals = false;
  auto q = CompiledModule::compile("global x; probe begin { x = 1 }", quiet);
  ASSERT_TRUE(q->ok()) << q->diagnostics();
  EXPECT_EQ(q->desc().display_count, 0u);
}

TEST(CodegenModule, GlobalInitializerSetsInitialValues) {
  auto none = CompiledModule::compile("global x; probe begin { x = 1 }");
  ASSERT_TRUE(none->ok()) << none->diagnostics();
  EXPECT_EQ(none->desc().init_globals, nullptr);

  CodegenOptions opts;
  ASSERT_FALSE(codegen::applyLimitDefines({{"MAXSTRINGLEN", "8"}}, opts));
  auto m = CompiledModule::compile(R"(
global count = 10, neg = -3, name = "a long initial value", plain
probe begin { plain = count + neg; println(name) }
)",
                                   opts);
  ASSERT_TRUE(m->ok()) << m->diagnostics();
  ASSERT_NE(m->desc().init_globals, nullptr);
  HandlerHarness h(*m);
  h.initialize();
  EXPECT_EQ(h.longGlobal("count"), 10);
  EXPECT_EQ(h.longGlobal("neg"), -3);
  EXPECT_EQ(h.stringGlobal("name"), "a long "); // MAXSTRINGLEN - 1 bytes
  EXPECT_EQ(h.longGlobal("plain"), 0);
}

// Lean frames (rbp and r12-r15 left unwritten by the entry) only where no
// argument is read from those slots and no probe of the module unwinds.
TEST(CodegenModule, LeanFramesWhereNoProbeReadsTheCalleeSavedSlots) {
  auto probe = [](const std::string &mark, const std::string &body) {
    return std::string("probe process(\"") + VECTOR_SITES + "\").mark(\"" + mark + "\") { " + body +
           " }\n";
  };
  auto leanFrames = [](const std::string &script) {
    std::vector<uint32_t> lean;
    auto m = CompiledModule::compile(script);
    EXPECT_TRUE(m->ok()) << m->diagnostics();
    if (m->ok())
      for (uint32_t i = 0; i < m->desc().marker_site_count; ++i)
        lean.push_back(m->desc().marker_sites[i].lean_frame);
    return lean;
  };
  EXPECT_EQ(leanFrames(probe("args_indirect", "printf(\"%d\\n\", $arg1)") +
                       probe("sse_indirect", "") + probe("full_avx", "")),
            (std::vector<uint32_t>{1, 1, 0})); // full saves keep full frames
  EXPECT_EQ(leanFrames(probe("args_r12", "printf(\"%d\\n\", $arg1)")), std::vector<uint32_t>{0});
  // One probe unwinding: every site of the module keeps its full frame.
  EXPECT_EQ(leanFrames(probe("args_indirect", "") + probe("sse_indirect", "print_ubacktrace()")),
            (std::vector<uint32_t>{0, 0}));
}

TEST(CodegenModule, EveryOptimisationLevelBuildsTheSameBehaviour) {
  const char *script = R"(
global out, a
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2) }
probe begin {
  for (i = 0; i < 10; i++) a[i % 3] += fib(i)
  foreach (k+ in a) out = out * 1000 + a[k]
}
)";
  for (unsigned level = 0; level <= 3; ++level) {
    CodegenOptions opts;
    opts.optLevel = level;
    auto m = CompiledModule::compile(script, opts);
    ASSERT_TRUE(m->ok()) << "O" << level << ": " << m->diagnostics();
    HandlerHarness h(*m);
    EXPECT_EQ(h.run(0), 0);
    // fib(0..9) = 0 1 1 2 3 5 8 13 21 34; by i % 3: 0+2+8+34, 1+3+13, 1+5+21
    EXPECT_EQ(h.longGlobal("out"), 44017027) << "O" << level;
  }
}

TEST(CodegenModule, MaxNestingIsTheDeepestCallChain) {
  auto flat = CompiledModule::compile("global x; probe begin { x = 1 }");
  ASSERT_TRUE(flat->ok()) << flat->diagnostics();
  EXPECT_EQ(flat->desc().max_nesting, 0);

  auto chain = CompiledModule::compile(R"(
function a(x) { return b(x) + 1 }
function b(x) { return x * 2 }
probe begin { println(a(1)) }
)");
  ASSERT_TRUE(chain->ok()) << chain->diagnostics();
  EXPECT_EQ(chain->desc().max_nesting, 2);

  auto recursive = CompiledModule::compile(R"(
function r(x) { return x ? r(x - 1) : 0 }
probe begin { println(r(3)) }
)");
  ASSERT_TRUE(recursive->ok()) << recursive->diagnostics();
  EXPECT_EQ(recursive->desc().max_nesting, 11); // depth 1 plus stap's 10 for recursion

  CodegenOptions opts;
  ASSERT_FALSE(codegen::applyLimitDefines({{"MAXNESTING", "4"}}, opts));
  auto given = CompiledModule::compile("probe begin { }", opts);
  ASSERT_TRUE(given->ok()) << given->diagnostics();
  EXPECT_EQ(given->desc().max_nesting, 4);
}

TEST(CodegenModule, HandlersLockOnlyTheGlobalsTheyNeed) {
  GeneratedIr r = generateIr(R"(
global counts, hits
function note(k) { counts[k]++ }
probe begin { hits <<< 1 }
probe end { note(1) }
)");
  ASSERT_TRUE(r.ok) << r.diagnostics;
  size_t begin = r.ir.find("define internal void @probe.0");
  size_t end = r.ir.find("define internal void @probe.1");
  ASSERT_NE(begin, std::string::npos);
  ASSERT_NE(end, std::string::npos);
  std::string beginBody = r.ir.substr(begin, end - begin);
  std::string endBody = r.ir.substr(end);
  // Scalar stats are per-CPU: no lock. A function's array is the caller's lock.
  EXPECT_EQ(beginBody.find("@sonde_locks_take"), std::string::npos);
  EXPECT_NE(endBody.find("@sonde_locks_take"), std::string::npos);
  EXPECT_NE(endBody.find("@sonde_locks_release"), std::string::npos);
}

TEST(CodegenModule, BuiltinsTheRuntimeLacksArePass3Errors) {
  // The BPF runtime has no user stacks: the kernel target refuses the call.
  GeneratedIr r = generateIr("probe kernel.trace(\"sched:sched_switch\") { print_ubacktrace() }");
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.diagnostics.find("semantic error: function 'print_ubacktrace' reads a traced "
                               "process and is only available in userspace probes: identifier "
                               "'print_ubacktrace' at input.probe:1:44"),
            std::string::npos)
      << r.diagnostics;
}

TEST(CodegenModule, KernelOnlyBuiltinsInUserspaceNameTheirScope) {
  GeneratedIr r = generateIr("probe begin { println(jiffies()) }");
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.diagnostics.find("semantic error: function 'jiffies' reads kernel state and is only "
                               "available in kernel probes: identifier 'jiffies' at "
                               "input.probe:1:23"),
            std::string::npos)
      << r.diagnostics;
}

TEST(CodegenModule, KernelRefusalsSayWhy) {
  GeneratedIr r = generateIr(
      "probe kernel.trace(\"sched:sched_switch\") { printf(\"%s\\n\", pid2execname(1)) }");
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.diagnostics.find("function 'pid2execname' is not available in kernel probes: a "
                               "tracepoint program cannot look up another task by pid (call it "
                               "in an end or timer probe)"),
            std::string::npos)
      << r.diagnostics;
}

TEST(CodegenModule, AUserFunctionTheKernelRuntimeLacksSaysWhyNotWhere) {
  // user_buffer_quoted reads the current task's memory, which kernel probes
  // can: the refusal is about its escaping, not about where it runs.
  GeneratedIr r = generateIr(
      "probe kernel.trace(\"sched:sched_switch\") { println(user_buffer_quoted(0, 4, 10)) }");
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.diagnostics.find("function 'user_buffer_quoted' is not available in kernel probes: "
                               "it escapes the NUL bytes of a buffer"),
            std::string::npos)
      << r.diagnostics;
}

TEST(CodegenModule, KernelProbesSayWhyGetCyclesIsRefused) {
  GeneratedIr r =
      generateIr("probe kernel.trace(\"sched:sched_switch\") { println(get_cycles()) }");
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.diagnostics.find("semantic error: function 'get_cycles' is not available in kernel "
                               "probes: BPF has no helper that reads the cycle counter"),
            std::string::npos)
      << r.diagnostics;
}

TEST(CodegenModule, HzInKernelProbesIsTheKernelsConfigHz) {
  const std::string script = R"(global hz
probe kernel.trace("sched:sched_switch") { hz = HZ() }
)";
  codegen::CodegenOptions unknown;
  unknown.kernelHz = 0;
  GeneratedIr refused = generateIr(script, unknown);
  EXPECT_FALSE(refused.ok);
  EXPECT_NE(refused.diagnostics.find("HZ() in kernel probes needs the running kernel's CONFIG_HZ"),
            std::string::npos)
      << refused.diagnostics;
  codegen::CodegenOptions known;
  known.kernelHz = 300;
  GeneratedIr r = generateIr(script, known);
  ASSERT_TRUE(r.ok) << r.diagnostics;
  EXPECT_NE(r.ir.find("@sonde_cfg_hz = internal local_unnamed_addr constant i32 300"),
            std::string::npos)
      << r.ir;
}

TEST(CodegenModule, KernelTracepointsBecomeABpfModuleBesideTheNativeOne) {
  GeneratedIr r = generateIr(R"(
global n
probe kernel.trace("sched:sched_switch") { n++; printf("%s\n", $prev_comm) }
probe end { printf("%d\n", n) }
)");
  ASSERT_TRUE(r.ok) << r.diagnostics;
  size_t kernel = r.ir.find("; ModuleID = 'sonde.kernel'");
  ASSERT_NE(kernel, std::string::npos) << r.ir;
  std::string native = r.ir.substr(0, kernel), bpf = r.ir.substr(kernel);
  // The end probe runs in sonde, the tracepoint handler in the kernel only.
  EXPECT_NE(native.find("define internal void @probe.1"), std::string::npos);
  EXPECT_EQ(native.find("define internal void @probe.0"), std::string::npos);
  EXPECT_NE(bpf.find("section \"tracepoint/sched/sched_switch\""), std::string::npos);
  EXPECT_NE(bpf.find("@sonde_bpf_printf"), std::string::npos);
  EXPECT_NE(bpf.find("@LICENSE"), std::string::npos);
  EXPECT_EQ(bpf.find("@probe.1"), std::string::npos);
}

TEST(CodegenModule, WhatKernelProbesCannotRunIsNamedWithItsPlace) {
  GeneratedIr r = generateIr(R"(global a, n
probe begin { a[1] = 1 }
probe kernel.trace("sched:sched_switch") {
  foreach (k in a) n++
  println(sprintf("%.2d", n))
}
)");
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.diagnostics.find("semantic error: foreach is not supported in kernel probes: "
                               "keyword at input.probe:4:3"),
            std::string::npos)
      << r.diagnostics;
  EXPECT_NE(r.diagnostics.find("sprintf conversion '%.2d' is not supported in kernel probes"),
            std::string::npos)
      << r.diagnostics;
}

TEST(CodegenModule, KernelAndProcessProbesCannotShareAGlobal) {
  GeneratedIr r = generateIr(R"(global n
probe kernel.trace("sched:sched_switch") { n++ }
probe process("/bin/true").begin { n++ }
)");
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.diagnostics.find("global 'n' is used by kernel.trace(\"sched:sched_switch\") (in "
                               "the kernel) and by process(\"/bin/true\").begin (in a traced "
                               "process)"),
            std::string::npos)
      << r.diagnostics;
}

TEST(CodegenModule, BuildDirectoryIsRemovedUnlessKept) {
  std::string error, removed, kept;
  {
    auto dir = codegen::BuildDirectory::create(&error);
    ASSERT_TRUE(dir) << error;
    removed = dir->path();
    auto other = codegen::BuildDirectory::create(&error);
    ASSERT_TRUE(other) << error;
    kept = other->path();
    other->keep();
  }
  EXPECT_FALSE(std::filesystem::exists(removed));
  EXPECT_TRUE(std::filesystem::exists(kept));
  std::filesystem::remove_all(kept);
}

TEST(CodegenOptionsTest, LimitDefinesAreValidated) {
  CodegenOptions o;
  EXPECT_EQ(codegen::applyLimitDefines({{"MAXSTRINGLEN", "abc"}}, o),
            "-D MAXSTRINGLEN=abc: expected a number from 2 to 65536");
  EXPECT_TRUE(codegen::applyLimitDefines({{"MAXSTRINGLEN", "1"}}, o));
  EXPECT_TRUE(codegen::applyLimitDefines({{"MAXACTION", "0"}}, o));
  EXPECT_TRUE(codegen::applyLimitDefines({{"MAXMAPENTRIES", "-5"}}, o));
  EXPECT_FALSE(codegen::applyLimitDefines({{"MINSTACKSPACE", "2048"}, {"UNKNOWN", "x"}}, o));

  CodegenOptions derived;
  ASSERT_FALSE(codegen::applyLimitDefines({{"MAXACTION", "50"}, {"MAXTRYLOCK", "0x10"}}, derived));
  EXPECT_EQ(derived.limits.max_action, 50u);
  EXPECT_EQ(derived.limits.max_action_interruptible, 500u); // 10 x MAXACTION
  EXPECT_EQ(derived.limits.max_try_lock, 16u);

  CodegenOptions given;
  ASSERT_FALSE(codegen::applyLimitDefines(
      {{"MAXACTION_INTERRUPTIBLE", "7"}, {"MAXACTION", "50"}, {"HIST_ELISION", "-1"}}, given));
  EXPECT_EQ(given.limits.max_action_interruptible, 7u);
  EXPECT_EQ(given.limits.hist_elision, -1);
  EXPECT_TRUE(codegen::isKnownLimitName("MAXERRORS"));
  EXPECT_FALSE(codegen::isKnownLimitName("MAXFOO"));
}

} // namespace
} // namespace sonde::test
