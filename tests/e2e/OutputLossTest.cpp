// Output is never lost without a word (issue 19): a write error on any output
// (-o on a full 4 MiB tmpfs the test mounts, -o /dev/full, standard output on
// /dev/full) ends the run with a non-zero exit and an error naming the file,
// and every record fired is either in the output or counted as lost. The
// target (e2e_flood) writes how many events it fired to a file of its own.
#include "OutputTestSupport.h"

#include <gtest/gtest.h>

#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <ostream>
#include <sys/wait.h>
#include <unistd.h>

namespace sonde::e2e {
namespace {

// What an output kind is asked with, and how its delivered records are counted.
enum class Delivered { TextLines, JsonLines, Ctf, Trace, Parts };

struct OutputKind {
  const char *name;
  std::vector<std::string> options;
  Delivered delivered;
  bool textTransport = false; // losses in lines ("N lines ... lost"), not the summary
  std::string probeExtra;     // more of the handler's body
};

void PrintTo(const OutputKind &kind, std::ostream *out) { *out << kind.name; }

const OutputKind kText{"text", {"--transport=text"}, Delivered::TextLines, true, ""};
const OutputKind kRelay{"relay", {"--transport=relay"}, Delivered::TextLines, false, ""};
const OutputKind kNetlink{"netlink", {"--transport=netlink"}, Delivered::TextLines, false, ""};
const OutputKind kJson{"json", {"--format=json"}, Delivered::JsonLines, false, ""};
const OutputKind kCtf{"ctf", {"--format=ctf"}, Delivered::Ctf, false, ""};
const OutputKind kTrace{"bulk", {"-b"}, Delivered::Trace, false, ""};
const OutputKind kRotated{"rotated", {"-S", "1"}, Delivered::Parts, false, ""};
const OutputKind kSwitched{"switch_file",
                           {"--transport=relay"},
                           Delivered::Parts,
                           false,
                           " if ($arg1 == 0 && $arg2 % 50000 == 49999) switch_file()"};

std::string floodScript(const OutputKind &kind) {
  return markProbe(E2E_FLOOD, "tick", "printf(\"%d %d\\n\", $arg1, $arg2);" + kind.probeExtra);
}

// Records the output holds, counted as its kind says.
uint64_t deliveredRecords(const OutputKind &kind, const std::string &out, const ScratchDir &dir) {
  switch (kind.delivered) {
  case Delivered::TextLines: return completeLines(readFile(out));
  case Delivered::JsonLines: return completeLines(readFile(out), "\"probe\":");
  case Delivered::Parts: {
    uint64_t lines = completeLines(readFile(out));
    for (int part = 0; part < 100; ++part)
      if (std::filesystem::exists(out + "." + std::to_string(part)))
        lines += completeLines(readFile(out + "." + std::to_string(part)));
    return lines;
  }
  case Delivered::Ctf: {
    auto bt = test::runProcess("/usr/bin/babeltrace2", {out}, dir.path(), std::chrono::seconds(60));
    EXPECT_TRUE(bt.exited && bt.exitCode == 0) << "babeltrace2: " << bt.stderrText.substr(0, 2000);
    return completeLines(bt.stdoutText, "mark(\"tick\")");
  }
  case Delivered::Trace: {
    std::string text = dir.file("report.txt");
    auto report = test::runProcess(SONDE_BINARY, {"report", out, "-o", text}, dir.path(),
                                   std::chrono::seconds(60));
    // A file cut by the write error ends with its last whole frame.
    EXPECT_TRUE(report.exited && report.exitCode == 0) << report.stderrText.substr(0, 2000);
    return completeLines(readFile(text));
  }
  }
  return 0;
}

// Runs the flood into `out` (or standard output on /dev/full when `out` is
// empty) and checks the run's account: a non-zero exit, `failure` on stderr,
// and delivered + lost = fired.
void checkLostOutput(const OutputKind &kind, const ScratchDir &dir, const std::string &out,
                     uint64_t events, const std::string &failure) {
  std::string script = floodScript(kind);
  std::string command = std::string(E2E_FLOOD) + " 4 " + std::to_string(events) + " " + dir.path();
  std::vector<std::string> options = kind.options;
  if (!out.empty())
    options.insert(options.end(), {"-o", out});
  auto r = out.empty() ? runSondeToDevFull(script, command, dir.path(), options)
                       : runSonde(script, command, dir.path(), options);
  std::string run = describeRun(script, command, r);
  ASSERT_TRUE(r.exited) << run;
  EXPECT_NE(r.exitCode, 0) << run;
  // The error names the file (a stream file of a trace directory for -b and
  // CTF) and says why.
  size_t named = r.stderrText.find(failure);
  EXPECT_NE(named, std::string::npos) << "expected '" << failure << "'\n" << run;
  EXPECT_NE(r.stderrText.find(std::string(": ") + std::strerror(ENOSPC), named), std::string::npos)
      << run;
  uint64_t fired = firedEvents(dir);
  ASSERT_EQ(fired, 4 * events) << run;
  // A traced thread's own write that failed (text output) leaves its errno be.
  EXPECT_EQ(errnoChanged(dir), 0u) << run;
  uint64_t lost = 0;
  if (kind.textTransport)
    ASSERT_TRUE(textLinesLost(r.stderrText, lost)) << run;
  else
    ASSERT_TRUE(summaryLost(r.stderrText, lost)) << run;
  // Nothing reaches /dev/full (which reads as endless zeros).
  uint64_t delivered = out.empty() || out == "/dev/full" ? 0 : deliveredRecords(kind, out, dir);
  EXPECT_EQ(delivered + lost, fired) << "delivered " << delivered << ", lost " << lost << "\n"
                                     << run;
  EXPECT_GT(lost, 0u) << run;
}

class FullFileSystem : public ::testing::TestWithParam<OutputKind> {};

TEST_P(FullFileSystem, WriteErrorIsReportedAndEveryRecordCounted) {
  ScratchDir dir;
  SmallTmpfs fs(dir.file("full"), 4);
  if (!fs.mounted())
    GTEST_SKIP() << fs.reason();
  const OutputKind &kind = GetParam();
  std::string out = fs.path() + "/out";
  // CTF and -b name the stream (or metadata) file in the directory.
  std::string failure = "cannot write '" + fs.path() + "/out";
  checkLostOutput(kind, dir, out, 200000, failure);
}

INSTANTIATE_TEST_SUITE_P(Outputs, FullFileSystem,
                         ::testing::Values(kText, kRelay, kNetlink, kJson, kCtf, kTrace, kRotated,
                                           kSwitched),
                         [](const auto &info) {
                           std::string name = info.param.name;
                           std::replace(name.begin(), name.end(), '_', 'X');
                           return name;
                         });

class DevFull : public ::testing::TestWithParam<OutputKind> {};

TEST_P(DevFull, AsOutputFile) {
  ScratchDir dir;
  checkLostOutput(GetParam(), dir, "/dev/full", 20000, "cannot write '/dev/full'");
}

TEST_P(DevFull, AsStandardOutput) {
  ScratchDir dir;
  checkLostOutput(GetParam(), dir, "", 20000, "cannot write to standard output");
}

INSTANTIATE_TEST_SUITE_P(Outputs, DevFull, ::testing::Values(kText, kRelay, kNetlink, kJson),
                         [](const auto &info) { return std::string(info.param.name); });

// `sonde report` writing a recorded trace: to a full file system, to
// /dev/full, to a standard output on /dev/full.
class ReportOutput : public ::testing::TestWithParam<const char *> {};

TEST_P(ReportOutput, WriteErrorIsReportedAndCounted) {
  ScratchDir dir;
  std::string trace = dir.file("trace");
  std::string script = floodScript(kRelay);
  std::string command = std::string(E2E_FLOOD) + " 4 100000 " + dir.path();
  auto recorded = runSonde(script, command, dir.path(), {"-b", "-o", trace});
  ASSERT_TRUE(recorded.exited && recorded.exitCode == 0) << describeRun(script, command, recorded);
  uint64_t fired = firedEvents(dir);
  ASSERT_EQ(fired, 400000u);

  std::string where = GetParam();
  std::optional<SmallTmpfs> fs;
  std::string out, failure;
  if (where == "tmpfs") {
    fs.emplace(dir.file("full"), 1);
    if (!fs->mounted())
      GTEST_SKIP() << fs->reason();
    out = fs->path() + "/report.txt";
    failure = "cannot write '" + out + "'";
  } else if (where == "devfull") {
    out = "/dev/full";
    failure = "cannot write '/dev/full'";
  } else {
    failure = "cannot write to standard output";
  }
  for (const char *format : {"text", "json"}) {
    std::vector<std::string> args{"report", trace, std::string("--format=") + format, "-v"};
    if (!out.empty())
      args.insert(args.end(), {"-o", out});
    auto r = out.empty()
                 ? runToDevFull(SONDE_BINARY, args, dir.path())
                 : test::runProcess(SONDE_BINARY, args, dir.path(), std::chrono::seconds(60));
    ASSERT_TRUE(r.exited) << r.describe() << "\n" << r.stderrText;
    EXPECT_NE(r.exitCode, 0) << r.stderrText;
    EXPECT_NE(r.stderrText.find(failure + ": " + std::strerror(ENOSPC)), std::string::npos)
        << failure << "\n"
        << r.stderrText;
    uint64_t notWritten = 0, read = 0;
    ASSERT_TRUE(reportNotWritten(r.stderrText, notWritten, read)) << r.stderrText;
    EXPECT_EQ(read, fired) << r.stderrText;
    uint64_t delivered = 0;
    if (!out.empty() && where == "tmpfs") {
      std::string text = readFile(out);
      delivered =
          std::string(format) == "json" ? completeLines(text, "\"probe\":") : completeLines(text);
      std::filesystem::remove(out);
    }
    EXPECT_EQ(delivered + notWritten, fired) << format << "\n" << r.stderrText;
    EXPECT_GT(notWritten, 0u) << r.stderrText;
  }
}

INSTANTIATE_TEST_SUITE_P(Destinations, ReportOutput,
                         ::testing::Values("tmpfs", "devfull", "stdout"));

// sonde with its standard output on a pipe whose reader takes one line and
// goes away (`sonde ... | head -1`); its stderr in DIR/stderr.
test::ProcessResult runIntoClosedPipe(const std::vector<std::string> &args, const ScratchDir &dir) {
  int fds[2];
  EXPECT_EQ(pipe2(fds, O_CLOEXEC), 0);
  std::string errPath = dir.file("stderr");
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], STDOUT_FILENO);
    int err = open(errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(err, STDERR_FILENO);
    std::vector<char *> argv{const_cast<char *>(SONDE_BINARY)};
    for (const std::string &a : args)
      argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(nullptr);
    execv(SONDE_BINARY, argv.data());
    _exit(127);
  }
  close(fds[1]);
  char c = 0;
  while (read(fds[0], &c, 1) == 1 && c != '\n') {
  }
  close(fds[0]);
  test::ProcessResult result;
  int status = 0;
  result.timedOut =
      !waitFor([&] { return waitpid(pid, &status, WNOHANG) == pid; }, std::chrono::seconds(60));
  if (result.timedOut) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
  }
  result.exited = !result.timedOut && WIFEXITED(status);
  result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.stderrText = readFile(errPath);
  return result;
}

// The reader of sonde's output goes away: sonde ends the run with the error
// and exit 1 (a run with no target would otherwise go on forever)...
TEST(ClosedPipe, TheRunEndsWithTheError) {
  ScratchDir dir;
  auto r = runIntoClosedPipe({"-e", "probe timer.ms(5) { printf(\"tick\\n\") }"}, dir);
  ASSERT_TRUE(r.exited) << r.describe() << "\n" << r.stderrText;
  EXPECT_EQ(r.exitCode, 1) << r.stderrText;
  EXPECT_NE(
      r.stderrText.find(std::string("cannot write to standard output: ") + std::strerror(EPIPE)),
      std::string::npos)
      << r.stderrText;
}

// ...and a traced process whose handlers write there (the text transport)
// gets no SIGPIPE: it runs to its end.
TEST(ClosedPipe, TheTracedProcessIsNotKilled) {
  ScratchDir dir;
  std::string command = std::string(E2E_FLOOD) + " 4 500000 " + dir.path();
  auto r = runIntoClosedPipe({"--transport=text", "-e", floodScript(kText), "-c", command}, dir);
  ASSERT_TRUE(r.exited) << r.describe() << "\n" << r.stderrText;
  EXPECT_EQ(r.exitCode, 1) << r.stderrText;
  EXPECT_TRUE(waitFor([&] { return firedEvents(dir) == 2000000u; }, std::chrono::seconds(60)))
      << "the target did not finish\n"
      << r.stderrText;
}

} // namespace
} // namespace sonde::e2e
