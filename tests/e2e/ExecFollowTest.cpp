// -c follows exec: a probed program reached through `sh -c`, `env` (also with
// its environment cleared), a shim script that execs it, or a fork that execs
// it is traced with exact values; programs without markers run as untraced and
// nothing of sonde's reaches their environment; a probed program no process ran
// is named at exit; a set-user-ID program is named as not followed. And with
// JSON records on standard output, the command's own output goes to standard
// error, so sonde's stays parseable.
#include "SondeRun.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <pwd.h>
#include <sys/statvfs.h>
#include <unistd.h>

namespace sonde::e2e {
namespace {

const std::string kExec = E2E_EXEC;

// Counts value() firings and sums their second argument.
const std::string kCountValues = "global n, s\n" + markProbe(kExec, "value", "n++; s += $arg2") +
                                 "probe end { printf(\"n=%d s=%d\\n\", n, s) }\n";

// What the script must print for the firings the target recorded
// ("fired=N sum=S" lines, one per process that fired).
std::string expectedCounts(const std::string &resultFile) {
  std::ifstream in(resultFile);
  long long n = 0, s = 0;
  for (std::string line; std::getline(in, line);) {
    long long fired = 0, sum = 0;
    if (sscanf(line.c_str(), "fired=%lld sum=%lld", &fired, &sum) == 2) {
      n += fired;
      s += sum;
    }
  }
  return "n=" + std::to_string(n) + " s=" + std::to_string(s) + "\n";
}

void expectTraced(const std::string &command, const std::string &resultFile,
                  const std::string &dir) {
  auto result = runSonde(kCountValues, command, dir);
  ASSERT_TRUE(result.exited && result.exitCode == 0) << describeRun(kCountValues, command, result);
  std::string expected = expectedCounts(resultFile);
  ASSERT_NE(expected, "n=0 s=0\n")
      << "the target did not run: " << describeRun(kCountValues, command, result);
  EXPECT_EQ(result.stdoutText, expected) << describeRun(kCountValues, command, result);
  EXPECT_EQ(result.stderrText.find("WARNING"), std::string::npos)
      << describeRun(kCountValues, command, result);
}

TEST(ExecFollow, ThroughShC) {
  ScratchDir dir;
  std::string result = dir.file("result");
  expectTraced("sh -c \"" + kExec + " fire 1000 " + result + "\"", result, dir.path());
}

TEST(ExecFollow, ThroughShCAfterOtherPrograms) {
  ScratchDir dir;
  std::string result = dir.file("result");
  // The shell forks for `true` and the first run, and execs the last.
  expectTraced("sh -c \"true; " + kExec + " fire 700 " + result + "; " + kExec + " fire 300 " +
                   result + "\"",
               result, dir.path());
}

TEST(ExecFollow, ThroughEnv) {
  ScratchDir dir;
  std::string result = dir.file("result");
  expectTraced("env X=1 " + kExec + " fire 1000 " + result, result, dir.path());
}

TEST(ExecFollow, ThroughEnvWithTheEnvironmentCleared) {
  ScratchDir dir;
  std::string result = dir.file("result");
  expectTraced("env -i " + kExec + " fire 1000 " + result, result, dir.path());
}

TEST(ExecFollow, ThroughAShimScript) {
  ScratchDir dir;
  std::string result = dir.file("result"), shim = dir.file("shim");
  {
    std::ofstream out(shim);
    out << "#!/bin/sh\n# a pyenv-style shim: finds the program, then execs it\nexec " << kExec
        << " \"$@\"\n";
  }
  std::filesystem::permissions(shim, std::filesystem::perms::owner_all);
  expectTraced(shim + " fire 1000 " + result, result, dir.path());
}

TEST(ExecFollow, ForkedChildThatExecs) {
  ScratchDir dir;
  std::string result = dir.file("result");
  expectTraced(kExec + " fork-exec 1000 " + result, result, dir.path());
}

// A program without probed files waits dormant, and attaches when it loads a
// probed library (each cycle of e2e_dlcycle fires 100 + 1 markers).
TEST(ExecFollow, DormantProgramAttachesWhenItLoadsAProbedLibrary) {
  ScratchDir dir;
  std::string script = "global n\n" + markProbe(E2E_DLCYCLE_LIB, "hit", "n++") +
                       "probe end { printf(\"n=%d\\n\", n) }\n";
  std::string command = std::string(E2E_DLCYCLE) + " " + E2E_DLCYCLE_LIB + " 40";
  auto run = runSonde(script, command, dir.path());
  ASSERT_TRUE(run.exited && run.exitCode == 0) << describeRun(script, command, run);
  EXPECT_EQ(run.stdoutText, "ready\ncycles 40: ok\nn=" + std::to_string(40 * 101) + "\n")
      << describeRun(script, command, run);
}

// target() is the command's pid in every process of it, as with stap.
TEST(ExecFollow, TargetIsTheCommandInAnExecedChild) {
  ScratchDir dir;
  std::string result = dir.file("result");
  std::string script = "global same, other\n" +
                       markProbe(kExec, "value", "if (pid() == target()) same++ else other++") +
                       "probe end { printf(\"same=%d other=%d\\n\", same, other) }\n";
  std::string command = kExec + " fork-exec 10 " + result;
  auto run = runSonde(script, command, dir.path());
  ASSERT_TRUE(run.exited && run.exitCode == 0) << describeRun(script, command, run);
  EXPECT_EQ(run.stdoutText, "same=0 other=10\n") << describeRun(script, command, run);
}

TEST(ExecFollow, PosixSpawnedChild) {
  ScratchDir dir;
  std::string result = dir.file("result");
  expectTraced(kExec + " spawn 1000 " + result, result, dir.path());
}

// Programs without markers run as they would untraced: their output, and an
// environment with nothing of sonde's in it (nor in what they run).
TEST(ExecFollow, UntracedProgramsSeeNothingOfSonde) {
  ScratchDir dir;
  std::string result = dir.file("result"), environ = dir.file("environ");
  std::string command = "sh -c \"echo hello; env; " + kExec + " fire 10 " + result + "; " + kExec +
                        " environ " + environ + "\"";
  auto run = runSonde(kCountValues, command, dir.path());
  ASSERT_TRUE(run.exited && run.exitCode == 0) << describeRun(kCountValues, command, run);
  EXPECT_EQ(run.stdoutText.rfind("hello\n", 0), 0u) << describeRun(kCountValues, command, run);
  EXPECT_NE(run.stdoutText.find(expectedCounts(result)), std::string::npos)
      << describeRun(kCountValues, command, run);
  std::string env = readFile(environ);
  EXPECT_FALSE(env.empty());
  for (const std::string &text : {run.stdoutText, env}) {
    EXPECT_EQ(text.find("SONDE_AGENT"), std::string::npos) << text;
    EXPECT_EQ(text.find("sonde-agent"), std::string::npos) << text;
  }
}

TEST(ExecFollow, WarnsAboutAProbedProgramNoProcessRan) {
  ScratchDir dir;
  auto run = runSonde(kCountValues, "sh -c true", dir.path());
  ASSERT_TRUE(run.exited && run.exitCode == 0) << describeRun(kCountValues, "sh -c true", run);
  EXPECT_EQ(run.stdoutText, "n=0 s=0\n");
  EXPECT_NE(run.stderrText.find("sonde: WARNING: no process ran " + kExec + "\n"),
            std::string::npos)
      << describeRun(kCountValues, "sh -c true", run);

  std::string result = dir.file("result");
  std::string command = "sh -c \"" + kExec + " fire 5 " + result + "\"";
  auto ran = runSonde(kCountValues, command, dir.path());
  EXPECT_EQ(ran.stderrText.find("no process ran"), std::string::npos)
      << describeRun(kCountValues, command, ran);
}

// The loader ignores LD_PRELOAD in a set-user-ID program (secure execution):
// it runs, untraced, and sonde names it.
TEST(ExecFollow, SetUserIdProgramIsNamedAsNotFollowed) {
  ScratchDir dir;
  struct statvfs fs;
  if (geteuid() != 0)
    GTEST_SKIP() << "needs root, to make a program set-user-ID to another user";
  if (statvfs(dir.path().c_str(), &fs) == 0 && (fs.f_flag & ST_NOSUID))
    GTEST_SKIP() << dir.path() << " is mounted nosuid";
  passwd *nobody = getpwnam("nobody");
  ASSERT_NE(nobody, nullptr);
  std::string copy = dir.file("setuid-exec"), result = dir.file("result");
  std::filesystem::copy_file(kExec, copy);
  ASSERT_EQ(chown(copy.c_str(), nobody->pw_uid, nobody->pw_gid), 0);
  ASSERT_EQ(chmod(copy.c_str(), 04755), 0);
  // nobody must be able to write the result.
  ASSERT_EQ(chmod(dir.path().c_str(), 0777), 0);
  std::string script =
      "global n\n" + markProbe(copy, "value", "n++") + "probe end { printf(\"n=%d\\n\", n) }\n";
  std::string command = "sh -c \"" + copy + " fire 10 " + result + "\"";
  auto run = runSonde(script, command, dir.path());
  ASSERT_TRUE(run.exited && run.exitCode == 0) << describeRun(script, command, run);
  EXPECT_EQ(readFile(result), "fired=10 sum=135\n");
  EXPECT_EQ(run.stdoutText, "n=0\n");
  EXPECT_NE(run.stderrText.find("runs " + copy + ", which is set-user-ID: "), std::string::npos)
      << describeRun(script, command, run);
  EXPECT_NE(run.stderrText.find("no process ran " + copy), std::string::npos)
      << describeRun(script, command, run);
}

// runuser runs the program as another user, who cannot read sonde's 0700 build
// directory: the agent loads the module through the descriptor it inherits.
TEST(ExecFollow, ThroughRunuserAsAnotherUser) {
  ScratchDir dir;
  if (geteuid() != 0 || !std::filesystem::exists("/usr/sbin/runuser"))
    GTEST_SKIP() << "needs root and /usr/sbin/runuser";
  ASSERT_EQ(chmod(dir.path().c_str(), 0777), 0); // nobody writes the result
  std::string result = dir.file("result");
  expectTraced("/usr/sbin/runuser -u nobody -- " + kExec + " fire 1000 " + result, result,
               dir.path());
}

// `sonde --format=json ... -c app | jq`: standard output holds only JSON.
TEST(TargetStdout, JsonOnStandardOutputStaysParseable) {
  ScratchDir dir;
  std::string script = markProbe(kExec, "printed", "printf(\"printed %d\\n\", $arg1)");
  std::string command = kExec + " print 20";
  auto run = runSonde(script, command, dir.path(), {"--format=json"});
  ASSERT_TRUE(run.exited && run.exitCode == 0) << describeRun(script, command, run);
  std::string out = dir.file("out.json");
  std::ofstream(out) << run.stdoutText;
  auto check = test::runProcess("/usr/bin/python3",
                                {"-c",
                                 "import json,sys\n"
                                 "n=sum(1 for l in open(sys.argv[1]) if json.loads(l))\n"
                                 "print(n)",
                                 out},
                                dir.path(), std::chrono::seconds(30));
  EXPECT_EQ(check.stdoutText, "20\n") << check.stderrText << describeRun(script, command, run);
  for (int i = 0; i < 20; ++i)
    EXPECT_NE(run.stderrText.find("target line " + std::to_string(i) + "\n"), std::string::npos)
        << describeRun(script, command, run);

  // Asked for: the command's output stays on standard output.
  auto mixed = runSonde(script, command, dir.path(), {"--format=json", "--target-stdout=stdout"});
  ASSERT_TRUE(mixed.exited && mixed.exitCode == 0) << describeRun(script, command, mixed);
  EXPECT_NE(mixed.stdoutText.find("target line 19\n"), std::string::npos);
  EXPECT_EQ(mixed.stderrText.find("target line"), std::string::npos);

  // Text output: the command's output goes where it always did.
  auto text = runSonde(script, command, dir.path());
  ASSERT_TRUE(text.exited && text.exitCode == 0) << describeRun(script, command, text);
  EXPECT_NE(text.stdoutText.find("target line 19\n"), std::string::npos);
  EXPECT_NE(text.stdoutText.find("printed 19\n"), std::string::npos);
}

} // namespace
} // namespace sonde::e2e
