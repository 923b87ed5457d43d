// Files and directories sonde writes, against another local user (issue 19,
// item 8): links planted in a world-writable sticky directory of that user
// redirect nothing, a directory of hers is not written, the default trace
// directory is a new one even when its name is taken, and the compiled module
// goes only where no one else can swap it. The other user is a uid that is
// not ours, given files with chown; the tests need root for that.
#include "SondeRun.h"

#include <gtest/gtest.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <future>
#include <sys/stat.h>
#include <unistd.h>

namespace sonde::e2e {
namespace {

constexpr uid_t kOtherUid = 54321;
const std::string kSecret = "root's secret\n";
const std::string kScript = "probe begin { println(\"hello from sonde\"); exit() }";

test::ProcessResult runSondeArgs(const std::vector<std::string> &args, const std::string &dir) {
  return test::runProcess(SONDE_BINARY, args, dir, std::chrono::seconds(60));
}

std::string describe(const test::ProcessResult &r) {
  return r.describe() + "\n--- stdout ---\n" + r.stdoutText.substr(0, 2000) + "--- stderr ---\n" +
         r.stderrText.substr(0, 2000);
}

// The scratch directory holds `victim` (a 0600 file of ours), `hers` (an
// empty directory of the other user) and `shared` (mode 1777, the other
// user's, where she plants links).
class OutputSafety : public ::testing::Test {
protected:
  void SetUp() override {
    if (geteuid() != 0)
      GTEST_SKIP() << "needs root to give files to another uid (chown)";
    ASSERT_FALSE(scratch.path().empty());
    victim = scratch.file("victim");
    std::ofstream(victim) << kSecret;
    ASSERT_EQ(::chmod(victim.c_str(), 0600), 0);
    hers = scratch.file("hers");
    shared = scratch.file("shared");
    for (const std::string &dir : {hers, shared}) {
      ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
      ASSERT_EQ(::chown(dir.c_str(), kOtherUid, kOtherUid), 0);
    }
    ASSERT_EQ(::chmod(shared.c_str(), 01777), 0);
  }

  void plantLink(const std::string &target, const std::string &path) {
    ASSERT_EQ(::symlink(target.c_str(), path.c_str()), 0) << path;
    ASSERT_EQ(::lchown(path.c_str(), kOtherUid, kOtherUid), 0) << path;
  }

  // The directory `sonde -b` reported writing, relative to `shared`.
  static std::string reportedTrace(const std::string &stderrText) {
    const std::string mark = "binary trace in ";
    size_t at = stderrText.find(mark);
    if (at == std::string::npos)
      return "";
    at += mark.size();
    return stderrText.substr(at, stderrText.find(' ', at) - at);
  }

  void expectNothingRedirected() {
    EXPECT_EQ(readFile(victim), kSecret);
    EXPECT_TRUE(std::filesystem::is_empty(hers));
  }

  ScratchDir scratch;
  std::string victim, hers, shared;
};

// The default names of the next minute, as sonde makes them.
std::vector<std::string> defaultTraceNames() {
  std::vector<std::string> names;
  time_t now = time(nullptr);
  for (time_t t = now - 1; t < now + 60; ++t) {
    char name[64];
    tm local;
    strftime(name, sizeof name, "sonde-trace-%Y%m%d-%H%M%S", localtime_r(&t, &local));
    names.push_back(name);
  }
  return names;
}

TEST_F(OutputSafety, DefaultTraceNamesPlantedAsLinksAreNotFollowed) {
  for (const std::string &name : defaultTraceNames())
    plantLink(hers, shared + "/" + name);
  auto r = runSondeArgs({"-b", "-e", kScript}, shared);
  ASSERT_TRUE(r.exited && r.exitCode == 0) << describe(r);
  expectNothingRedirected();
  std::string trace = reportedTrace(r.stderrText);
  ASSERT_NE(trace, "") << r.stderrText;
  struct stat st;
  ASSERT_EQ(::lstat((shared + "/" + trace).c_str(), &st), 0) << trace;
  EXPECT_TRUE(S_ISDIR(st.st_mode)) << trace << " is not a directory of its own";
  EXPECT_EQ(st.st_uid, geteuid());
  auto report = runSondeArgs({"report", trace}, shared);
  EXPECT_EQ(report.stdoutText, "hello from sonde\n") << describe(report);
}

// Directories of earlier runs in the same second, and two runs at once: each
// run makes a directory of its own.
TEST_F(OutputSafety, RunsInTheSameSecondGetTheirOwnTraceDirectories) {
  for (const std::string &name : defaultTraceNames()) {
    std::filesystem::create_directory(shared + "/" + name);
    std::ofstream(shared + "/" + name + "/schema") << "an earlier run's\n";
  }
  auto first = std::async(std::launch::async, [&] {
    return runSondeArgs({"-b", "-e", kScript}, shared);
  });
  auto second = runSondeArgs({"-b", "-e", kScript}, shared);
  auto one = first.get();
  ASSERT_TRUE(one.exited && one.exitCode == 0) << describe(one);
  ASSERT_TRUE(second.exited && second.exitCode == 0) << describe(second);
  std::string a = reportedTrace(one.stderrText), b = reportedTrace(second.stderrText);
  EXPECT_NE(a, b);
  for (const std::string &trace : {a, b}) {
    auto report = runSondeArgs({"report", trace}, shared);
    EXPECT_EQ(report.stdoutText, "hello from sonde\n") << trace << ": " << describe(report);
  }
}

// Every path given with -o (and the -S parts, and `sonde report -o`): a link
// of the other user's there is refused with its name, and nothing is written
// through it.
TEST_F(OutputSafety, PlantedLinksAtOutputPathsAreRefused) {
  struct Case {
    std::vector<std::string> args;
    std::string link, target;
  } cases[] = {
      {{"-o", "out.txt", "-e", kScript}, "out.txt", victim},
      {{"--format=json", "-o", "out.json", "-e", kScript}, "out.json", victim},
      {{"-S", "1,2", "-o", "rotated.txt", "-e", kScript}, "rotated.txt.0", victim},
      {{"-b", "-o", "trace", "-e", kScript}, "trace", hers},
      {{"--format=ctf", "-o", "ctf", "-e", kScript}, "ctf", hers},
      // A link on the way to the file, not the file itself.
      {{"-o", "sub/out.txt", "-e", kScript}, "sub", hers},
  };
  for (const Case &c : cases) {
    plantLink(c.target, shared + "/" + c.link);
    auto r = runSondeArgs(c.args, shared);
    EXPECT_TRUE(r.exited && r.exitCode == 1) << describe(r);
    EXPECT_NE(r.stderrText.find("'" + c.link + "' is a symbolic link of uid 54321"),
              std::string::npos)
        << describe(r);
    expectNothingRedirected();
  }

  auto b = runSondeArgs({"-b", "-o", "mine", "-e", kScript}, shared);
  ASSERT_TRUE(b.exited && b.exitCode == 0) << describe(b);
  plantLink(victim, shared + "/report.txt");
  auto report = runSondeArgs({"report", "mine", "-o", "report.txt"}, shared);
  EXPECT_EQ(report.exitCode, 1) << describe(report);
  EXPECT_NE(report.stderrText.find("'report.txt' is a symbolic link"), std::string::npos)
      << describe(report);
  expectNothingRedirected();
}

TEST_F(OutputSafety, AnotherUsersTraceDirectoryIsRefused) {
  auto r = runSondeArgs({"-b", "-o", hers, "-e", kScript}, scratch.path());
  EXPECT_TRUE(r.exited && r.exitCode == 1) << describe(r);
  EXPECT_NE(r.stderrText.find("'" + hers + "' belongs to uid 54321, not to you"), std::string::npos)
      << describe(r);
  expectNothingRedirected();
}

TEST_F(OutputSafety, AnExistingOutputFileIsTruncatedNotAppended) {
  std::string out = scratch.file("out.txt");
  std::ofstream(out) << "an earlier run's output\n";
  auto r = runSondeArgs({"-o", out, "-e", kScript}, scratch.path());
  ASSERT_TRUE(r.exited && r.exitCode == 0) << describe(r);
  EXPECT_EQ(readFile(out), "hello from sonde\n");
}

// The module sonde and traced processes load goes where no other user can
// swap it: not a directory anyone may write (no sticky bit), not a directory
// of the other user's.
TEST_F(OutputSafety, ModuleDirectoryNoOneElseCanChange) {
  std::string open = scratch.file("open");
  ASSERT_EQ(::mkdir(open.c_str(), 0755), 0);
  ASSERT_EQ(::chmod(open.c_str(), 0777), 0);
  for (const std::string &tmp : {open, shared}) {
    auto r = test::runProcess("/usr/bin/env", {"TMPDIR=" + tmp, SONDE_BINARY, "-p4", "-e", kScript},
                              scratch.path(), std::chrono::seconds(60));
    EXPECT_TRUE(r.exited && r.exitCode == 1) << describe(r);
    EXPECT_NE(r.stderrText.find("cannot create a temporary directory in " + tmp), std::string::npos)
        << describe(r);
    EXPECT_TRUE(std::filesystem::is_empty(tmp)) << tmp;
  }
  auto r = test::runProcess("/usr/bin/env",
                            {"TMPDIR=" + scratch.path(), SONDE_BINARY, "-p4", "-e", kScript},
                            scratch.path(), std::chrono::seconds(60));
  ASSERT_TRUE(r.exited && r.exitCode == 0) << describe(r);
  std::filesystem::path module = r.stdoutText.substr(0, r.stdoutText.find('\n'));
  struct stat st;
  ASSERT_EQ(::lstat(module.parent_path().c_str(), &st), 0) << module;
  EXPECT_EQ(module.parent_path().parent_path(), scratch.path());
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_EQ(st.st_uid, geteuid());
}

} // namespace
} // namespace sonde::e2e
