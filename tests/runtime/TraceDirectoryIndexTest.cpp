// A trace directory's index (written as the recording ends) against the
// stream files there are: removed or cut files, a missing or damaged index,
// no stream at all; and the losses only the index holds.
#include "runtime/session/TraceDirectory.h"

#include "TraceTestSupport.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

using namespace sonde::session;
using namespace sonde::testing;

namespace {

const sonde_trace_clock kClock{1000, 5, 1732250000000000000, 1, 0, SONDE_CLOCK_MONOTONIC};

// A trace in DIR/t with two streams of `frames` 100-byte frames each, and
// losses of no known thread.
std::string recordTrace(const TraceDir &dir, int frames = 3, uint64_t unattributed = 0) {
  std::string error;
  auto schema = TraceSchema::build({{"%d\n", ""}}, &error);
  EXPECT_TRUE(schema) << error;
  std::string path = dir.path() + "/t";
  auto writer = TraceDirectoryWriter::open(path, *schema, kClock, &error);
  EXPECT_TRUE(writer) << error;
  std::string data(100, 'x');
  for (int i = 0; i < frames; ++i) {
    writer->chunk({1, 100, 101}, data.data(), 100);
    writer->chunk({2, 100, 102}, data.data(), 100);
  }
  if (unattributed)
    writer->lost({3, 0, 0}, unattributed);
  EXPECT_TRUE(writer->close(&error)) << error;
  return path;
}

std::string joined(const std::vector<std::string> &lines) {
  std::string all;
  for (const std::string &l : lines)
    all += l + "\n";
  return all;
}

TEST(TraceDirectoryIndex, AWholeTraceHasNoDamage) {
  TraceDir dir("sonde-trace-index");
  std::string path = recordTrace(dir, 3, 42);
  std::string error;
  auto trace = TraceDirectory::open(path, &error);
  ASSERT_TRUE(trace) << error;
  EXPECT_EQ(trace->streams.size(), 2u);
  EXPECT_TRUE(trace->damage.empty()) << joined(trace->damage);
  EXPECT_TRUE(trace->warnings.empty()) << joined(trace->warnings);
  EXPECT_EQ(trace->unattributedLost, 42u);
  EXPECT_EQ(trace->notWritten, 0u);
  EXPECT_FALSE(std::filesystem::exists(path + "/stream-0-0.bin"));
}

TEST(TraceDirectoryIndex, RemovedStreamFilesAreNamed) {
  TraceDir dir("sonde-trace-index");
  std::string path = recordTrace(dir);
  std::filesystem::remove(path + "/stream-100-101.bin");
  std::filesystem::remove(path + "/stream-100-102.bin");
  std::string error;
  auto trace = TraceDirectory::open(path, &error);
  ASSERT_TRUE(trace) << error;
  EXPECT_TRUE(trace->streams.empty());
  std::string damage = joined(trace->damage);
  EXPECT_NE(damage.find(path + "/stream-100-101.bin is missing"), std::string::npos) << damage;
  EXPECT_NE(damage.find(path + "/stream-100-102.bin is missing"), std::string::npos) << damage;
}

TEST(TraceDirectoryIndex, ACutStreamFileIsNamed) {
  TraceDir dir("sonde-trace-index");
  std::string path = recordTrace(dir);
  std::filesystem::resize_file(path + "/stream-100-102.bin", 150);
  std::string error;
  auto trace = TraceDirectory::open(path, &error);
  ASSERT_TRUE(trace) << error;
  ASSERT_EQ(trace->damage.size(), 1u) << joined(trace->damage);
  EXPECT_EQ(trace->damage[0],
            path + "/stream-100-102.bin is cut short: 150 of the 348 bytes the recording wrote");
}

TEST(TraceDirectoryIndex, NoIndexIsAWarningWhenStreamsAreThere) {
  TraceDir dir("sonde-trace-index");
  std::string path = recordTrace(dir);
  std::filesystem::remove(path + "/index");
  std::string error;
  auto trace = TraceDirectory::open(path, &error);
  ASSERT_TRUE(trace) << error;
  EXPECT_TRUE(trace->damage.empty()) << joined(trace->damage);
  ASSERT_EQ(trace->warnings.size(), 1u);
  EXPECT_NE(trace->warnings[0].find(path + "/index is missing"), std::string::npos);
  EXPECT_EQ(trace->streams.size(), 2u);
}

TEST(TraceDirectoryIndex, NoIndexAndNoStreamIsDamage) {
  TraceDir dir("sonde-trace-index");
  std::string path = recordTrace(dir);
  for (const char *name : {"index", "stream-100-101.bin", "stream-100-102.bin"})
    std::filesystem::remove(path + "/" + name);
  std::string error;
  auto trace = TraceDirectory::open(path, &error);
  ASSERT_TRUE(trace) << error;
  ASSERT_EQ(trace->damage.size(), 1u);
  EXPECT_NE(trace->damage[0].find("'" + path + "' holds no stream files"), std::string::npos);
}

TEST(TraceDirectoryIndex, ADamagedIndexNamesItsLine) {
  TraceDir dir("sonde-trace-index");
  std::string path = recordTrace(dir);
  std::ofstream(path + "/index", std::ios::app) << "stream ../../etc/passwd 1\n";
  std::string error;
  auto trace = TraceDirectory::open(path, &error);
  ASSERT_TRUE(trace) << error;
  ASSERT_EQ(trace->damage.size(), 1u);
  EXPECT_EQ(trace->damage[0], path + "/index:6: unexpected 'stream ../../etc/passwd 1'");
}

} // namespace
