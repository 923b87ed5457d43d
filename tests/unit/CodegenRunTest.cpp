// Whole runs of the `sonde` binary (passes 1-5): what compiled handlers print
// and how their runtime errors propagate, are caught and are reported.
#include "CodegenTestSupport.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace sonde::test {
namespace {

TEST(CodegenRun, PrintFamily) {
  SondeRun r = runSonde(R"(
global st
probe begin {
  printf("%d|%5s|%-3d|%x\n", -42, "ab", 7, 255)
  print("a", 1, "b"); println()
  println("x", 2)
  printd(", ", "p", 3, "q"); printdln("-", 1, 2)
  print_char(65); print_char(10)
  s = sprintf("<%s:%d>", "k", 9); t = sprint(1, "z"); u = sprintln("n"); v = sprintd("/", 1, "w")
  w = sprintdln(":", "a", "b")
  println(s, t, u, v, w)
  st <<< 1; st <<< 2; st <<< 2
  print(@hist_log(st))
  h = sprint(@hist_log(st))
  println(strlen(h) > 0)
  exit()
}
)");
  EXPECT_EQ(r.status, 0) << r.err;
  std::string start = "-42|   ab|7  |ff\n"
                      "a1b\n"
                      "x2\n"
                      "p, 3, q1-2\n"
                      "A\n"
                      "<k:9>1zn\n1/wa:b\n\n"
                      "value |-------------------------------------------------- count\n";
  EXPECT_EQ(r.out.substr(0, start.size()), start) << r.out;
  EXPECT_EQ(r.out.substr(r.out.size() - 3), "\n1\n") << r.out; // table, blank line, sprint
}

TEST(CodegenRun, TryCatchTakesTheMessageAndKeepsEarlierWrites) {
  SondeRun r = runSonde(R"(
global a[1], n
function risky(x) { if (x > 1) error(sprintf("too big: %d", x)); return x }
probe begin {
  try { n = 1; println(risky(5)); n = 2 } catch (m) { println("caught ", m, " n=", n) }
  try { a[1] = 1; a[2] = 2 } catch (m) { println(m) }
  try { try { println(1 / 0) } catch (e) { error("again: " . e) } } catch (e) { println(e) }
  try { println(@min(n_unused_stats)) } catch { println("no variable") }
  foreach (k in a) try { println(k / 0) } catch { println("in loop") }
  foreach (k in a) println("after ", k)
  exit()
}
global n_unused_stats
probe never { n_unused_stats <<< 1 }
)");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "caught too big: 5 n=1\n"
                   "Array overflow, check size limit (1)\n"
                   "again: division by 0\n"
                   "no variable\n"
                   "in loop\n"
                   "after 1\n");
}

TEST(CodegenRun, ErrorsNameTheirToken) {
  SondeRun div =
      runSonde("function f(a, b) {\n  return a / b\n}\nprobe begin { println(f(1, 0)) }\n");
  EXPECT_EQ(div.status, 1);
  EXPECT_NE(div.err.find("ERROR: division by 0 near operator '/' at "), std::string::npos)
      << div.err;
  EXPECT_NE(div.err.find("script.probe:2:12 in probe begin\n"), std::string::npos) << div.err;

  SondeRun assign = runSonde("probe begin {\n  x = 0; y = 5\n  y %= x\n}\n");
  EXPECT_NE(assign.err.find("ERROR: division by 0 near identifier 'x' at "), std::string::npos)
      << assign.err;

  SondeRun nesting = runSonde("function down:long(n:long) {\n  return down(n + 1)\n}\n"
                              "probe begin { println(down(1)) }\n",
                              {"-D", "MAXNESTING=3"});
  EXPECT_NE(nesting.err.find("ERROR: MAXNESTING exceeded near identifier 'down' at "),
            std::string::npos)
      << nesting.err;
  EXPECT_NE(nesting.err.find("script.probe:1:10 in probe begin"), std::string::npos) << nesting.err;

  SondeRun chain = runSonde("function f:long(x:long) { next }\nprobe begin { println(f(1)) }\n");
  EXPECT_NE(chain.err.find("ERROR: all functions exhausted near identifier 'f' at "),
            std::string::npos)
      << chain.err;
}

TEST(CodegenRun, MaxActionIsUncatchableAndNamesTheStatement) {
  SondeRun r = runSonde("probe begin {\n  try {\n    while (1) n++\n  } catch {\n"
                        "    println(\"never\")\n  }\n}\n",
                        {"-D", "MAXACTION=20"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("ERROR: MAXACTION exceeded near identifier 'n' at "), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("script.probe:3:15 in probe begin"), std::string::npos) << r.err;

  // begin probes get MAXACTION_INTERRUPTIBLE (10 x MAXACTION): 1000 iterations fit.
  SondeRun enough =
      runSonde("probe begin { for (i = 0; i < 1000; i++) t += i; println(t); exit() }\n");
  EXPECT_EQ(enough.status, 0) << enough.err;
  EXPECT_EQ(enough.out, "499500\n");

  SondeRun unlimited =
      runSonde("probe begin { for (i = 0; i < 100000; i++) t += i; println(t); exit() }\n",
               {"--suppress-time-limits"});
  EXPECT_EQ(unlimited.status, 0) << unlimited.err;
  EXPECT_EQ(unlimited.out, "4999950000\n");
}

TEST(CodegenRun, RegexMatchesAndCaptures) {
  SondeRun r = runSonde(R"S(
probe begin {
  s = "hello world"
  printf("%d %d %d\n", s =~ "wor", s !~ "wor", s =~ "^world")
  if (s =~ "(l+)o w(or)") printf("[%s] [%s] [%s] %d\n", matched(0), matched(1), matched(2), ngroups())
  printf("%d %d\n", "abc123" =~ "^[a-z]+[0-9]+$", "aaa" =~ "^a{3}$")
  exit()
}
)S");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "1 0 0\n[llo wor] [ll] [or] 3\n1 1\n");
}

TEST(CodegenRun, BadRegexIsAPass3Error) {
  SondeRun r = runSonde(R"(probe begin { println("x" =~ "(unclosed") })");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("semantic error: regex error: "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("Pass 3: translation failed.  [man error::pass3]"), std::string::npos)
      << r.err;
}

TEST(CodegenRun, PassThreePrintsIrAndPassFourTheModule) {
  SondeRun ir = runSonde("probe begin { exit() }", {"-p3"});
  EXPECT_EQ(ir.status, 0) << ir.err;
  EXPECT_NE(ir.out.find("define internal void @probe.0(ptr"), std::string::npos);
  EXPECT_NE(ir.out.find("@sonde_module"), std::string::npos);

  for (const char *level : {"-O0", "-O3"}) {
    SondeRun so = runSonde("probe begin { exit() }", {"-p4", level});
    EXPECT_EQ(so.status, 0) << so.err;
    ASSERT_FALSE(so.out.empty());
    std::string path = so.out.substr(0, so.out.size() - 1);
    EXPECT_TRUE(std::filesystem::exists(path)) << path;
    std::filesystem::remove_all(std::filesystem::path(path).parent_path());
  }

  SondeRun bad = runSonde("probe begin { exit() }", {"-O4"});
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.err.find("Invalid optimisation level (should be 0-3)."), std::string::npos);

  SondeRun define = runSonde("probe begin { exit() }", {"-D", "MAXSTRINGLEN=x"});
  EXPECT_EQ(define.status, 1);
  EXPECT_NE(define.err.find("sonde: -D MAXSTRINGLEN=x: expected a number from 2 to 65536"),
            std::string::npos)
      << define.err;
}

TEST(CodegenRun, KeepTemporaryDirectoryWithK) {
  SondeRun r = runSonde("probe begin { exit() }", {"-k"});
  EXPECT_EQ(r.status, 0) << r.err;
  auto at = r.err.find("Keeping temporary directory \"");
  ASSERT_NE(at, std::string::npos) << r.err;
  std::string dir = r.err.substr(at + 29);
  dir = dir.substr(0, dir.find('"'));
  EXPECT_TRUE(std::filesystem::exists(dir + "/module.so")) << dir;
  std::filesystem::remove_all(dir);
}

} // namespace
} // namespace sonde::test
