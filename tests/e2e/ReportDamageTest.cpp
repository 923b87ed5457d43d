// `sonde report` on a damaged trace (issue 19, 12d): stream files removed or
// cut, the schema gone, garbage in a stream file, no index. Each is a clear
// error naming the file and a non-zero exit (no index alone is a warning),
// never a crash, and the records that are there are still printed.
#include "OutputTestSupport.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace sonde::e2e {
namespace {

constexpr uint64_t kEvents = 2 * 5000;

// A -b trace of e2e_flood (2 threads x 5000 events) in DIR/trace.
std::string recordTrace(const ScratchDir &dir) {
  std::string trace = dir.file("trace");
  std::string script = markProbe(E2E_FLOOD, "tick", "printf(\"%d %d\\n\", $arg1, $arg2)");
  std::string command = std::string(E2E_FLOOD) + " 2 5000 " + dir.path();
  auto r = runSonde(script, command, dir.path(), {"-b", "-o", trace});
  EXPECT_TRUE(r.exited && r.exitCode == 0) << describeRun(script, command, r);
  return trace;
}

std::vector<std::string> streamFiles(const std::string &trace) {
  std::vector<std::string> files;
  for (const auto &entry : std::filesystem::directory_iterator(trace))
    if (entry.path().filename().string().rfind("stream-", 0) == 0)
      files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

test::ProcessResult report(const ScratchDir &dir, const std::string &trace) {
  return test::runProcess(SONDE_BINARY, {"report", trace}, dir.path(), std::chrono::seconds(60));
}

TEST(ReportDamage, RemovedStreamFilesAreNamedAndFail) {
  ScratchDir dir;
  std::string trace = recordTrace(dir);
  std::vector<std::string> files = streamFiles(trace);
  ASSERT_EQ(files.size(), 2u);
  for (const std::string &f : files)
    std::filesystem::remove(f);
  auto r = report(dir, trace);
  ASSERT_TRUE(r.exited) << r.describe();
  EXPECT_NE(r.exitCode, 0) << r.stderrText;
  for (const std::string &f : files)
    EXPECT_NE(r.stderrText.find("ERROR: " + f + " is missing"), std::string::npos) << r.stderrText;
  EXPECT_EQ(r.stdoutText, "");
}

TEST(ReportDamage, ACutStreamFileIsNamedAndTheRestPrinted) {
  ScratchDir dir;
  std::string trace = recordTrace(dir);
  std::vector<std::string> files = streamFiles(trace);
  ASSERT_EQ(files.size(), 2u);
  std::filesystem::resize_file(files[1], std::filesystem::file_size(files[1]) / 2);
  auto r = report(dir, trace);
  ASSERT_TRUE(r.exited) << r.describe();
  EXPECT_NE(r.exitCode, 0) << r.stderrText;
  EXPECT_NE(r.stderrText.find(files[1] + " is cut short"), std::string::npos) << r.stderrText;
  // The whole stream and the first part of the cut one.
  uint64_t printed = completeLines(r.stdoutText);
  EXPECT_GE(printed, kEvents / 2);
  EXPECT_LT(printed, kEvents);
}

TEST(ReportDamage, GarbageInAStreamFileIsNamed) {
  ScratchDir dir;
  std::string trace = recordTrace(dir);
  std::vector<std::string> files = streamFiles(trace);
  ASSERT_FALSE(files.empty());
  std::ofstream(files[0], std::ios::app) << std::string(100, '\x7f');
  auto r = report(dir, trace);
  ASSERT_TRUE(r.exited) << r.describe();
  EXPECT_NE(r.exitCode, 0) << r.stderrText;
  EXPECT_NE(r.stderrText.find(files[0] + ": damaged frame at offset"), std::string::npos)
      << r.stderrText;
  EXPECT_EQ(completeLines(r.stdoutText), kEvents);
}

// Bytes written over inside a stream file (its size unchanged): whatever no
// longer decodes is an error naming the file, and the rest is printed.
TEST(ReportDamage, RecordsWrittenOverInAStreamFileFail) {
  ScratchDir dir;
  std::string trace = recordTrace(dir);
  std::vector<std::string> files = streamFiles(trace);
  ASSERT_FALSE(files.empty());
  {
    std::fstream f(files[0], std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(200);
    f << std::string(64, '\xff');
  }
  auto r = report(dir, trace);
  ASSERT_TRUE(r.exited) << r.describe();
  EXPECT_EQ(r.exitCode, 1) << r.stderrText;
  EXPECT_NE(r.stderrText.find("sonde report: ERROR: " + files[0]), std::string::npos)
      << r.stderrText;
  EXPECT_GT(completeLines(r.stdoutText), 0u);
}

TEST(ReportDamage, AMissingSchemaIsNamed) {
  ScratchDir dir;
  std::string trace = recordTrace(dir);
  std::filesystem::remove(trace + "/schema");
  auto r = report(dir, trace);
  ASSERT_TRUE(r.exited) << r.describe();
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_NE(r.stderrText.find("cannot read '" + trace + "/schema'"), std::string::npos)
      << r.stderrText;
}

TEST(ReportDamage, WithoutTheIndexTheStreamsAreReadWithAWarning) {
  ScratchDir dir;
  std::string trace = recordTrace(dir);
  std::filesystem::remove(trace + "/index");
  auto r = report(dir, trace);
  ASSERT_TRUE(r.exited) << r.describe();
  EXPECT_EQ(r.exitCode, 0) << r.stderrText;
  EXPECT_NE(r.stderrText.find("WARNING: " + trace + "/index is missing"), std::string::npos)
      << r.stderrText;
  EXPECT_EQ(completeLines(r.stdoutText), kEvents);
}

} // namespace
} // namespace sonde::e2e
