// Scripts at and beyond the compiler's limits, generated here and compiled by
// the real `sonde`: operator chains and nesting at and past the depth limits
// (also on a 1 MiB stack), long concatenations and call chains, exponential
// macros, alias chains, over-long names, printf's argument limit, a kernel
// probe over the BPF stack. Each must end with a clear error or succeed, never
// with a signal; the work is bounded by a CPU-time limit (`ulimit -t`), many
// times what it takes.
#include "ProcessRunner.h"
#include "ScriptDir.h"

#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <unistd.h>

namespace sonde::test {
namespace {

constexpr std::chrono::seconds kTimeout{120};
constexpr int kCpuSeconds = 8;        // each run; these take 0.1 to 2.5 s
constexpr int kSmallStackKb = 1024;   // `ulimit -s 1024`
constexpr size_t kDepthLimit = 10000; // parse/Parser.cpp
constexpr size_t kNestingLimit = 1000;

// `sonde ARGS` in `dir` under a CPU-time limit and, if given, a stack limit.
ProcessResult sondeLimited(const ScriptDir &dir, const std::vector<std::string> &args,
                           int stackKb = 0) {
  std::string limits = "ulimit -t " + std::to_string(kCpuSeconds);
  if (stackKb)
    limits += " && ulimit -s " + std::to_string(stackKb);
  std::vector<std::string> shArgs = {"-c", limits + " && exec \"$0\" \"$@\"", SONDE_BINARY};
  shArgs.insert(shArgs.end(), args.begin(), args.end());
  return runProcess("/bin/sh", shArgs, dir.path().string(), kTimeout);
}

std::string repeat(const std::string &piece, size_t n) {
  std::string s;
  s.reserve(piece.size() * n);
  for (size_t i = 0; i < n; ++i)
    s += piece;
  return s;
}

// `term OP term OP ... term`, n terms.
std::string chain(const std::string &term, const std::string &op, size_t n) {
  return term + repeat(" " + op + " " + term, n - 1);
}

size_t count(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

const char *const kBinaryOperators[] = {"+", "-",  "*",  "/", "%",  "<<", ">>", ">>>", "&",  "|",
                                        "^", "&&", "||", "<", "<=", ">",  ">=", "==",  "!=", "."};

// The 70,000-term `1+1+...` of issue 19 overflowed the stack in pass 3; every
// left-associative chain now counts against the depth limit in the parser.
TEST(PathologicalScripts, LongChainsOfEveryOperatorStopAtTheDepthLimit) {
  ScriptDir dir("sonde-limits");
  std::string script = "global s\n";
  size_t probes = 0;
  for (const std::string op : kBinaryOperators) {
    std::string term = op == "." ? "s" : "1";
    size_t terms = op == "+" ? 70000 : kDepthLimit + 100;
    script += "probe begin { println(" + chain(term, op, terms) + ") }\n";
    ++probes;
  }
  ProcessResult r = sondeLimited(dir, {"-p4", dir.write("chains.probe", script)}, kSmallStackKb);
  ASSERT_TRUE(r.exited) << r.describe();
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(count(r.stderrText,
                  "parse error: too many chained operators and nested expressions (limit 10000)"),
            probes)
      << r.stderrText.substr(0, 2000);
  EXPECT_NE(r.stderrText.find("Pass 1: parse failed."), std::string::npos);
}

// Nesting of every kind past its limit: a parse error, not a crash.
TEST(PathologicalScripts, DeepNestingOfEveryKindStopsAtTheNestingLimit) {
  ScriptDir dir("sonde-limits");
  const size_t n = 5 * kNestingLimit;
  const std::vector<std::string> bodies = {
      "println(" + repeat("(", n) + "1" + repeat(")", n) + ")",
      "println(" + repeat("- ", n) + "1)",
      "println(" + repeat("!", n) + "1)",
      "println(" + repeat("x ? 1 : ", n) + "2)",
      repeat("x = ", n) + "1",
      repeat("{", n) + "x++" + repeat("}", n),
      repeat("if (x) ", n) + "x++",
      chain("if (x) x++", "else", n),
      repeat("while (x < 0) ", n) + "x++",
      "println(" + repeat("f(", n) + "1" + repeat(")", n) + ")",
      "println(" + repeat("a[", n) + "1" + repeat("]", n) + ")",
      "println(" + repeat("sprint(", n) + "1" + repeat(")", n) + ")",
  };
  std::string script = "global a\nfunction f(v) { return v }\n";
  for (const std::string &body : bodies)
    script += "probe begin { x = 1; " + body + " }\n";
  ProcessResult r = sondeLimited(dir, {"-p4", dir.write("nesting.probe", script)}, kSmallStackKb);
  ASSERT_TRUE(r.exited) << r.describe();
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(count(r.stderrText, "parse error: too many nested expressions or statements (limit "
                                "1000)"),
            bodies.size())
      << r.stderrText.substr(0, 2000);
}

// The deepest scripts the limits let through compile, on a 1 MiB stack too:
// the compiler runs on a stack of its own, sized for them.
TEST(PathologicalScripts, DeepestAcceptedScriptsCompileOnASmallStack) {
  ScriptDir dir("sonde-limits");
  const size_t terms = kDepthLimit - 10, depth = kNestingLimit - 10;
  std::string script = "global a\nfunction f(v) { return v + 1 }\n";
  script += "probe begin { x = 1; println(" + chain("x", "+", terms) + ") }\n";
  script += "probe begin { x = 1; println(" + chain("x", "&&", terms) + ") }\n";
  script +=
      "probe begin { x = 1; println(" + repeat("(", depth) + "x" + repeat(")", depth) + ") }\n";
  script += "probe begin { println(" + repeat("f(", depth) + "1" + repeat(")", depth) + ") }\n";
  script +=
      "probe begin { a[1] = 1; println(" + repeat("a[", depth) + "1" + repeat("]", depth) + ") }\n";
  ProcessResult r = sondeLimited(dir, {"-p4", dir.write("deep.probe", script)}, kSmallStackKb);
  ASSERT_TRUE(r.exited) << r.describe();
  EXPECT_EQ(r.exitCode, 0) << r.stderrText.substr(0, 2000);
  std::string module = r.stdoutText.substr(0, r.stdoutText.find('\n'));
  EXPECT_TRUE(module.ends_with("/module.so")) << r.stdoutText;
  std::error_code ec;
  std::filesystem::remove_all(std::filesystem::path(module).parent_path(), ec);
}

// 8,000 operands took 15 s at -p4 (a buffer and a copy per operator, which
// LLVM's optimiser took quadratic time over; two such in one handler took
// minutes); now one buffer each, and the result is right.
TEST(PathologicalScripts, LongConcatenationsCompileAndRun) {
  ScriptDir dir("sonde-limits");
  std::string operands = chain("s", ".", 8000);
  std::string script = "probe begin { s = \"ab\"; t = " + operands + "; u = " + operands +
                       "; println(strlen(t), \" \", substr(u, 505, 10)); exit() }\n";
  ProcessResult r = sondeLimited(dir, {dir.write("concat.probe", script)});
  ASSERT_TRUE(r.exited) << r.describe();
  EXPECT_EQ(r.exitCode, 0) << r.stderrText.substr(0, 2000);
  EXPECT_EQ(r.stdoutText, "511 bababa\n"); // cut at MAXSTRINGLEN - 1
}

// f0 calls f1 ... calls f1000: 17 s at -p4 (LLVM inlined the chain into every
// link); only the last links are inlined now.
TEST(PathologicalScripts, LongCallChainCompilesAndRuns) {
  ScriptDir dir("sonde-limits");
  std::string script;
  for (int i = 0; i < 1000; ++i)
    script +=
        "function f" + std::to_string(i) + "(x) { return f" + std::to_string(i + 1) + "(x) + 1 }\n";
  script += "function f1000(x) { return x }\nprobe begin { println(f0(1)); exit() }\n";
  ProcessResult r = sondeLimited(dir, {dir.write("calls.probe", script)});
  ASSERT_TRUE(r.exited) << r.describe();
  EXPECT_EQ(r.exitCode, 0) << r.stderrText.substr(0, 2000);
  EXPECT_EQ(r.stdoutText, "1001\n");
}

// Macros that each use the one before twice expanded exponentially (killed
// after 30 s); the tokens macros may give a file are bounded.
TEST(PathologicalScripts, ExponentialMacrosStopAtTheTokenLimit) {
  ScriptDir dir("sonde-limits");
  for (const std::string base : {"x++;", ""}) {
    std::string script = "@define m0 %( " + base + " %)\n";
    for (int i = 1; i <= 40; ++i)
      script += "@define m" + std::to_string(i) + " %( @m" + std::to_string(i - 1) + " @m" +
                std::to_string(i - 1) + " %)\n";
    script += "probe begin { x = 0; @m40 println(x) }\n";
    ProcessResult r = sondeLimited(dir, {"-p2", dir.write("macros.probe", script)});
    ASSERT_TRUE(r.exited) << r.describe();
    EXPECT_EQ(r.exitCode, 1);
    EXPECT_EQ(r.stderrText, "parse error: macro expansion too large (limit 1000000 tokens from "
                            "macros in a file)\n"
                            "         at: operator '@m40' at macros.probe:42:22\n"
                            "     source: probe begin { x = 0; @m40 println(x) }\n"
                            "                                  ^\n\n"
                            "1 parse error.\nPass 1: parse failed.  [man error::pass1]\n");
  }
}

// Each alias of a chain is a level of recursion in pass 2.
TEST(PathologicalScripts, AliasChainsStopAtTheNestingLimit) {
  ScriptDir dir("sonde-limits");
  std::string script = "probe a0 = begin { }\n";
  for (int i = 1; i <= 1500; ++i)
    script += "probe a" + std::to_string(i) + " = a" + std::to_string(i - 1) + " { }\n";
  script += "probe a1500 { exit() }\n";
  ProcessResult r = sondeLimited(dir, {"-p2", dir.write("aliases.probe", script)}, kSmallStackKb);
  ASSERT_TRUE(r.exited) << r.describe();
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(r.stderrText, "semantic error: while resolving probe point: identifier 'a1500' at "
                          "aliases.probe:1502:7\n"
                          "        source: probe a1500 { exit() }\n"
                          "                      ^\n\n"
                          "semantic error: too many nested alias expansions (limit 1000) in a500 "
                          "at aliases.probe:502:14\n\n"
                          "Pass 2: analysis failed.  [man error::pass2]\n");
}

// The module's global layout stores names of at most 4096 characters; a longer
// one failed at pass 5 with `corrupt global descriptor`.
TEST(PathologicalScripts, GlobalNamesAreBoundedInPassTwo) {
  ScriptDir dir("sonde-limits");
  std::string longest(4096, 'g');
  ProcessResult ok = sondeLimited(
      dir, {dir.write("longest.probe", "global " + longest + "\nprobe begin { " + longest +
                                           " = 7; println(" + longest + "); exit() }\n")});
  ASSERT_TRUE(ok.exited) << ok.describe();
  EXPECT_EQ(ok.exitCode, 0) << ok.stderrText.substr(0, 500);
  EXPECT_EQ(ok.stdoutText, "7\n");

  std::string tooLong(5000, 'g');
  ProcessResult r = sondeLimited(
      dir, {dir.write("toolong.probe", "global " + tooLong + "\nprobe begin { " + tooLong +
                                           " = 7; println(" + tooLong + "); exit() }\n")});
  ASSERT_TRUE(r.exited) << r.describe();
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(r.stderrText.rfind("semantic error: global name too long (5000 characters, at most "
                               "4096): identifier 'gggg",
                               0),
            0u)
      << r.stderrText.substr(0, 500);
  EXPECT_NE(r.stderrText.find("' at toolong.probe:1:8\n"), std::string::npos);
  EXPECT_NE(r.stderrText.find("Pass 2: analysis failed."), std::string::npos);
}

// As in stap, a print-family call takes at most 32 arguments: they are an
// array on the handler's stack (in a traced process, or a BPF program's 512
// bytes). Thousands took minutes to compile.
TEST(PathologicalScripts, PrintArgumentsAreBoundedAsInStap) {
  ScriptDir dir("sonde-limits");
  auto printf = [](size_t n) {
    return "probe begin { printf(\"" + repeat("%d", n) + "\\n\"" + repeat(", 1", n) +
           "); exit() }\n";
  };
  ProcessResult ok = sondeLimited(dir, {dir.write("most.probe", printf(32))});
  ASSERT_TRUE(ok.exited) << ok.describe();
  EXPECT_EQ(ok.exitCode, 0) << ok.stderrText.substr(0, 500);
  EXPECT_EQ(ok.stdoutText, repeat("1", 32) + "\n");
  ProcessResult r = sondeLimited(dir, {"-p3", dir.write("more.probe", printf(33))});
  ASSERT_TRUE(r.exited) << r.describe();
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(r.stderrText, "semantic error: too many arguments to print (33): identifier 'printf' "
                          "at more.probe:1:15\n"
                          "        source: probe begin { printf(\"" +
                              repeat("%d", 33) + "\\n\"" + repeat(", 1", 33) +
                              "); exit() }\n"
                              "                              ^\n\n"
                              "Pass 3: translation failed.  [man error::pass3]\n");
  ProcessResult many = sondeLimited(
      dir,
      {"-p3", dir.write("print.probe", "probe begin { print(" + chain("1", ",", 10000) + ") }\n")});
  ASSERT_TRUE(many.exited) << many.describe();
  EXPECT_EQ(many.exitCode, 1);
  EXPECT_EQ(many.stderrText.rfind("semantic error: too many arguments to print (10000): "
                                  "identifier 'print' at print.probe:1:15\n",
                                  0),
            0u)
      << many.stderrText.substr(0, 500);
}

// Past the first 64 printf records of a handler (2,000 took 35 s to compile,
// LLVM's loop passes being quadratic in the inline appends' loops), records go
// through the runtime: the same output.
TEST(PathologicalScripts, ManyPrintfRecordsInOneHandler) {
  ScriptDir dir("sonde-limits");
  std::string script = "probe begin {\n";
  std::string expected;
  for (int i = 0; i < 100; ++i) {
    script += "  printf(\"%d %d\\n\", " + std::to_string(i) + ", -" + std::to_string(i) + ")\n";
    expected += std::to_string(i) + " " + (i ? "-" : "") + std::to_string(i) + "\n";
  }
  ProcessResult r = sondeLimited(
      dir, {"--transport=relay", dir.write("printfs.probe", script + "  exit()\n}\n")});
  ASSERT_TRUE(r.exited) << r.describe();
  EXPECT_EQ(r.exitCode, 0) << r.stderrText.substr(0, 2000);
  EXPECT_EQ(r.stdoutText, expected);
  EXPECT_NE(r.stderrText.find("relay transport (block mode): 100 records"), std::string::npos)
      << r.stderrText;
}

// LLVM's BPF back end printed its own "Looks like the BPF stack limit is
// exceeded ... -mllvm -bpf-stack-size" and exited; now the probe, its line and
// what fills the stack are named.
TEST(PathologicalScripts, BpfStackOverflowNamesTheProbe) {
  // kernel.trace probes resolve through tracefs (sonde mounts it when it can).
  if (geteuid() != 0 && access("/sys/kernel/tracing/events/sched/sched_switch/format", R_OK) != 0 &&
      access("/sys/kernel/debug/tracing/events/sched/sched_switch/format", R_OK) != 0)
    GTEST_SKIP() << "tracefs is not readable by this user";
  ScriptDir dir("sonde-limits");
  // Three sprintf calls of 32 values each in one statement: 768 bytes at once.
  std::string sprintf = "sprintf(\"" + repeat("%d ", 32) + "\"" + repeat(", n", 32) + ")";
  std::string script = "global n\nprobe kernel.trace(\"sched:sched_switch\") {\n  printf(\"%s "
                       "%s %s\\n\", " +
                       sprintf + ", " + sprintf + ", " + sprintf + ")\n  n++\n}\n";
  // The same values in three statements fit: each statement's arguments are
  // dead once it has run, and the next one's take their room.
  std::string split = "global n\nprobe kernel.trace(\"sched:sched_switch\") {\n";
  for (int i = 0; i < 3; ++i)
    split += "  printf(\"%s\\n\", " + sprintf + ")\n";
  ProcessResult fits = sondeLimited(dir, {"-p4", dir.write("split.probe", split + "  n++\n}\n")});
  ASSERT_TRUE(fits.exited) << fits.describe();
  EXPECT_EQ(fits.exitCode, 0) << fits.stderrText.substr(0, 2000);
  std::error_code ec;
  std::filesystem::remove_all(
      std::filesystem::path(fits.stdoutText.substr(0, fits.stdoutText.find('\n'))).parent_path(),
      ec);

  ProcessResult r = sondeLimited(dir, {"-p4", dir.write("stack.probe", script)});
  ASSERT_TRUE(r.exited) << r.describe();
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(r.stderrText,
            "semantic error: kernel.trace(\"sched:sched_switch\") needs more stack than a BPF "
            "program has (512 bytes): sprintf arguments take 768 bytes. Give the printf and "
            "sprintf calls of one statement fewer values (8 bytes each), split the work between "
            "probes, or do it in a timer or end probe (strings do not count: they live in a "
            "per-CPU map): identifier 'kernel' at stack.probe:2:7\n"
            "        source: probe kernel.trace(\"sched:sched_switch\") {\n"
            "                      ^\n\n"
            "Pass 4: compilation failed.  [man error::pass4]\n");
}

} // namespace
} // namespace sonde::test
