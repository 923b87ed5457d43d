// OutputPaths: what sonde writes is never redirected by another local user.
// Another user is played by files given (chown) to a uid that is not ours, in
// a world-writable sticky directory of that uid, as a user's shared directory
// would be; the victim is a 0600 file of ours outside it. Needs root (chown).
#include "runtime/transport/OutputPaths.h"
#include "runtime/session/TraceDirectory.h"
#include "runtime/transport/CtfWriter.h"

#include "TraceTestSupport.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

using namespace sonde::transport;
using sonde::testing::readFile;
using sonde::testing::TraceDir;

namespace {

constexpr uid_t kOtherUid = 54321;
const std::string kSecret = "root's secret\n";

// A scratch directory (private, ours) holding `victim` (0600, ours) and
// `shared` (mode 1777, owned by kOtherUid).
class OutputPaths : public ::testing::Test {
protected:
  void SetUp() override {
    if (geteuid() != 0)
      GTEST_SKIP() << "needs root to give files to another uid (chown)";
    ASSERT_FALSE(scratch.path().empty());
    victim = scratch.path() + "/victim";
    std::ofstream(victim) << kSecret;
    ASSERT_EQ(::chmod(victim.c_str(), 0600), 0);
    shared = scratch.path() + "/shared";
    ASSERT_EQ(::mkdir(shared.c_str(), 0755), 0);
    ASSERT_EQ(::chown(shared.c_str(), kOtherUid, kOtherUid), 0);
    ASSERT_EQ(::chmod(shared.c_str(), 01777), 0);
  }

  // A link at `path` to `target` that belongs to the other user.
  void plantLink(const std::string &target, const std::string &path) {
    ASSERT_EQ(::symlink(target.c_str(), path.c_str()), 0) << path;
    ASSERT_EQ(::lchown(path.c_str(), kOtherUid, kOtherUid), 0) << path;
  }

  static bool exists(const std::string &path) {
    struct stat st;
    return ::lstat(path.c_str(), &st) == 0;
  }

  TraceDir scratch{"sonde-output-paths"};
  std::string victim, shared;
};

TEST_F(OutputPaths, OutputFileRefusesAnotherUsersLink) {
  std::string out = shared + "/out.txt";
  plantLink(victim, out);
  std::string error;
  EXPECT_EQ(openOutputFile(out, &error), -1);
  EXPECT_NE(error.find("'" + out + "' is a symbolic link of uid 54321"), std::string::npos)
      << error;
  EXPECT_EQ(readFile(victim), kSecret);
}

TEST_F(OutputPaths, OutputFileRefusesALinkOnTheWay) {
  // The link is a directory on the path, not the file itself.
  plantLink(scratch.path(), shared + "/sub");
  std::string error;
  EXPECT_EQ(openOutputFile(shared + "/sub/victim", &error), -1);
  EXPECT_NE(error.find("'" + shared + "/sub' is a symbolic link"), std::string::npos) << error;
  EXPECT_EQ(readFile(victim), kSecret);
}

TEST_F(OutputPaths, OutputFileRefusesAHardLinkWhereOthersWrite) {
  std::string out = shared + "/out.txt";
  ASSERT_EQ(::link(victim.c_str(), out.c_str()), 0);
  std::string error;
  EXPECT_EQ(openOutputFile(out, &error), -1);
  EXPECT_NE(error.find("'" + out + "' has 2 hard links"), std::string::npos) << error;
  EXPECT_EQ(readFile(victim), kSecret);
}

TEST_F(OutputPaths, OutputFileRefusesAnotherUsersFileWhereOthersWrite) {
  std::string out = shared + "/out.txt";
  std::ofstream(out) << "hers\n";
  ASSERT_EQ(::chown(out.c_str(), kOtherUid, kOtherUid), 0);
  std::string error;
  EXPECT_EQ(openOutputFile(out, &error), -1);
  EXPECT_NE(error.find("'" + out + "' is a file of uid 54321"), std::string::npos) << error;
  EXPECT_EQ(readFile(out), "hers\n");
}

TEST_F(OutputPaths, OutputFileIsCreatedOrTruncatedNeverAppended) {
  std::string error;
  std::string fresh = shared + "/new.txt";
  int fd = openOutputFile(fresh, &error);
  ASSERT_GE(fd, 0) << error;
  ::close(fd);
  struct stat st;
  ASSERT_EQ(::stat(fresh.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, geteuid());

  std::string mine = scratch.path() + "/mine.txt";
  std::ofstream(mine) << "an earlier run's output\n";
  fd = openOutputFile(mine, &error);
  ASSERT_GE(fd, 0) << error;
  ASSERT_EQ(::write(fd, "new\n", 4), 4);
  ::close(fd);
  EXPECT_EQ(readFile(mine), "new\n");
}

TEST_F(OutputPaths, OwnLinksAndTheKernelsLinksAreFollowed) {
  // A link of yours where no one else writes: followed as usual.
  std::string target = scratch.path() + "/target.txt";
  std::string link = scratch.path() + "/link.txt";
  ASSERT_EQ(::symlink("target.txt", link.c_str()), 0);
  std::string error;
  int fd = openOutputFile(link, &error);
  ASSERT_GE(fd, 0) << error;
  ASSERT_EQ(::write(fd, "via link\n", 9), 9);
  ::close(fd);
  EXPECT_EQ(readFile(target), "via link\n");

  // /dev/stdout's kind: /proc/self/fd/N names a pipe, not a path.
  int pipeFds[2];
  ASSERT_EQ(::pipe(pipeFds), 0);
  fd = openOutputFile("/dev/fd/" + std::to_string(pipeFds[1]), &error);
  ASSERT_GE(fd, 0) << error;
  ASSERT_EQ(::write(fd, "x", 1), 1);
  char c = 0;
  EXPECT_EQ(::read(pipeFds[0], &c, 1), 1);
  EXPECT_EQ(c, 'x');
  ::close(fd);
  ::close(pipeFds[0]);
  ::close(pipeFds[1]);
}

TEST_F(OutputPaths, RemovingAnOldPartLeavesOthersFiles) {
  std::string hers = shared + "/out.txt.0";
  std::ofstream(hers) << "hers\n";
  ASSERT_EQ(::chown(hers.c_str(), kOtherUid, kOtherUid), 0);
  removeOutputFile(hers);
  EXPECT_TRUE(exists(hers));
  std::string mine = shared + "/out.txt.1";
  std::ofstream(mine) << "mine\n";
  removeOutputFile(mine);
  EXPECT_FALSE(exists(mine));
}

TEST_F(OutputPaths, TraceDirectoryRefusesLinksAndOthersDirectories) {
  std::string error;
  std::string link = shared + "/trace";
  plantLink(scratch.path(), link);
  EXPECT_EQ(openTraceDirectory(link, &error), -1);
  EXPECT_NE(error.find("'" + link + "' is a symbolic link of uid 54321"), std::string::npos)
      << error;

  // Another user's directory, even where only we write.
  std::string hers = scratch.path() + "/hers";
  ASSERT_EQ(::mkdir(hers.c_str(), 0777), 0);
  ASSERT_EQ(::chown(hers.c_str(), kOtherUid, kOtherUid), 0);
  EXPECT_EQ(openTraceDirectory(hers, &error), -1);
  EXPECT_NE(error.find("'" + hers + "' belongs to uid 54321, not to you"), std::string::npos)
      << error;

  std::string made = shared + "/mine";
  int fd = openTraceDirectory(made, &error);
  ASSERT_GE(fd, 0) << error;
  ::close(fd);
  struct stat st;
  ASSERT_EQ(::lstat(made.c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_uid, geteuid());
}

TEST_F(OutputPaths, NewTraceDirectoriesTakeAnotherNameWhenOneIsTaken) {
  std::filesystem::path saved = std::filesystem::current_path();
  ASSERT_EQ(::chdir(shared.c_str()), 0);
  std::string decoy = scratch.path() + "/decoy";
  ASSERT_EQ(::mkdir(decoy.c_str(), 0755), 0);
  plantLink(decoy, shared + "/sonde-trace-x");
  std::set<std::string> names;
  std::string error;
  for (int i = 0; i < 3; ++i) {
    std::string name;
    int fd = createTraceDirectory("sonde-trace-x", &name, &error);
    ASSERT_GE(fd, 0) << error;
    ::close(fd);
    EXPECT_EQ(name.rfind("sonde-trace-x-", 0), 0u) << name;
    EXPECT_EQ(name.size(), std::string("sonde-trace-x-").size() + 6) << name;
    names.insert(name);
    struct stat st;
    ASSERT_EQ(::lstat(name.c_str(), &st), 0);
    EXPECT_TRUE(S_ISDIR(st.st_mode) && st.st_uid == geteuid()) << name;
  }
  std::filesystem::current_path(saved);
  EXPECT_EQ(names.size(), 3u);
  EXPECT_TRUE(std::filesystem::is_empty(decoy));
}

TEST_F(OutputPaths, TraceFilesAreNewOnes) {
  std::string error;
  int dir = openTraceDirectory(shared + "/t", &error);
  ASSERT_GE(dir, 0) << error;
  ASSERT_EQ(::symlink(victim.c_str(), (shared + "/t/schema").c_str()), 0);
  EXPECT_EQ(createTraceFile(dir, shared + "/t", "schema", &error), -1);
  EXPECT_NE(error.find("cannot create '" + shared + "/t/schema': File exists"), std::string::npos)
      << error;
  ::close(dir);
  EXPECT_EQ(readFile(victim), kSecret);
}

// The reproduced attack on -b: a stream file planted once the directory is
// made (the directory was another user's then) is not appended to.
TEST_F(OutputPaths, TraceWriterNeverAppendsThroughALink) {
  std::string error;
  auto schema = sonde::session::TraceSchema::build({{"%d\n", ""}}, &error);
  ASSERT_TRUE(schema) << error;
  const sonde_trace_clock clock{1000, 5, 1732250000000000000, 1, 0, SONDE_CLOCK_MONOTONIC};
  std::string dir = shared + "/trace";
  auto writer = sonde::session::TraceDirectoryWriter::open(dir, *schema, clock, &error);
  ASSERT_TRUE(writer) << error;
  ASSERT_EQ(::symlink(victim.c_str(), (dir + "/stream-100-101.bin").c_str()), 0);
  std::string data(64, 'x');
  writer->chunk({1, 100, 101}, data.data(), static_cast<uint32_t>(data.size()));
  EXPECT_FALSE(writer->close(&error));
  EXPECT_NE(error.find(dir + "/stream-100-101.bin"), std::string::npos) << error;
  EXPECT_EQ(readFile(victim), kSecret);
}

TEST_F(OutputPaths, CtfTraceRefusesAnotherUsersLink) {
  std::string hers = scratch.path() + "/hers";
  ASSERT_EQ(::mkdir(hers.c_str(), 0755), 0);
  ASSERT_EQ(::chown(hers.c_str(), kOtherUid, kOtherUid), 0);
  std::string link = shared + "/ctf";
  plantLink(hers, link);
  std::string error;
  EXPECT_FALSE(CtfWriter::open(link, "t", {"tsc", 1000000000, 0, 0}, &error));
  EXPECT_NE(error.find("'" + link + "' is a symbolic link"), std::string::npos) << error;
  EXPECT_TRUE(std::filesystem::is_empty(hers));
}

TEST_F(OutputPaths, ModuleDirectoryOnlyWhereNoOneElseCanSwapIt) {
  std::string error;
  // A sticky directory of another user: she may rename what is in it.
  EXPECT_EQ(createPrivateDirectory(shared, "sonde", &error), "");
  EXPECT_NE(error.find("'" + shared + "' belongs to uid 54321"), std::string::npos) << error;
  // Writable by everyone and not sticky: anyone may rename what is in it.
  std::string open = scratch.path() + "/open";
  ASSERT_EQ(::mkdir(open.c_str(), 0755), 0);
  ASSERT_EQ(::chmod(open.c_str(), 0777), 0);
  EXPECT_EQ(createPrivateDirectory(open, "sonde", &error), "");
  EXPECT_NE(error.find("'" + open + "' can be written by other users and is not sticky"),
            std::string::npos)
      << error;
  // A sticky directory of ours (as /tmp is root's): a private directory in it.
  std::string sticky = scratch.path() + "/sticky";
  ASSERT_EQ(::mkdir(sticky.c_str(), 0755), 0);
  ASSERT_EQ(::chmod(sticky.c_str(), 01777), 0);
  std::string made = createPrivateDirectory(sticky, "sonde", &error);
  ASSERT_NE(made, "") << error;
  struct stat st;
  ASSERT_EQ(::lstat(made.c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  EXPECT_EQ(st.st_uid, geteuid());
}

} // namespace
