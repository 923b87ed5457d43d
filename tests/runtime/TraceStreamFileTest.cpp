// Trace stream files: aligned frames written with direct I/O where the file
// system allows it (ext4 here), compact buffered frames where it does not
// (tmpfs), and a trace directory read back the same from either.
#include "runtime/session/TraceStreamFile.h"
#include "runtime/session/TraceDirectory.h"
#include "runtime/transport/RecordCodec.h"

#include "TraceTestSupport.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

namespace sonde::session {
namespace {

using testing::TraceDir;

std::vector<uint8_t> fileBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

template <class T> T at(const std::vector<uint8_t> &bytes, size_t offset) {
  T v;
  std::memcpy(&v, bytes.data() + offset, sizeof v);
  return v;
}

// Checks the aligned frame at `offset` and returns the next one's offset.
size_t checkAlignedFrame(const std::vector<uint8_t> &file, size_t offset, const char *data,
                         uint32_t size, uint64_t lost) {
  auto h = at<TraceAlignedFrameHeader>(file, offset);
  EXPECT_EQ(h.frame.magic, kTraceAlignedFrameMagic);
  EXPECT_EQ(h.frame.size, size);
  EXPECT_EQ(h.frame.lostBefore, lost);
  EXPECT_EQ(h.headerBytes % 512, 0u);
  EXPECT_EQ(h.frameBytes % 512, 0u);
  EXPECT_GE(h.frameBytes, h.headerBytes + size);
  EXPECT_LE(offset + h.frameBytes, file.size());
  if (offset + h.frameBytes > file.size())
    return file.size();
  EXPECT_EQ(std::memcmp(file.data() + offset + h.headerBytes, data, size), 0);
  for (size_t i = offset + h.headerBytes + size; i < offset + h.frameBytes; ++i)
    if (file[i] != 0) {
      ADD_FAILURE() << "padding byte " << i << " is not zero";
      break;
    }
  return offset + h.frameBytes;
}

TEST(TraceStreamFile, DirectIoWritesAlignedFramesFromAlignedAndUnalignedMemory) {
  TraceDir dir;
  std::string path = dir.path() + "/stream.bin";
  std::string error;
  auto file = TraceStreamFile::create(path, &error);
  ASSERT_TRUE(file) << error;
  if (!file->direct())
    GTEST_SKIP() << dir.path() << " does not do direct I/O (statx STATX_DIOALIGN)";
  // Aligned like a ring's sub-buffer; 5000 bytes: whole blocks and a rest.
  auto *ring = static_cast<char *>(std::aligned_alloc(4096, 8192));
  for (int i = 0; i < 8192; ++i)
    ring[i] = static_cast<char>(i * 7 + 1);
  ASSERT_TRUE(file->append(ring, 5000, 0));
  ASSERT_TRUE(file->append(ring + 3, 100, 7)); // a partly read sub-buffer
  ASSERT_TRUE(file->append(nullptr, 0, 3));    // losses after the last records
  ASSERT_TRUE(file->close());

  std::vector<uint8_t> bytes = fileBytes(path);
  EXPECT_EQ(bytes.size(), file->bytes());
  EXPECT_EQ(bytes.size() % 512, 0u);
  size_t next = checkAlignedFrame(bytes, 0, ring, 5000, 0);
  next = checkAlignedFrame(bytes, next, ring + 3, 100, 7);
  next = checkAlignedFrame(bytes, next, nullptr, 0, 3);
  EXPECT_EQ(next, bytes.size());
  std::free(ring);
}

TEST(TraceStreamFile, WithoutDirectIoFramesAreCompact) {
  std::string shm = "/dev/shm";
  if (!std::filesystem::is_directory(shm))
    GTEST_SKIP() << "no " << shm;
  TraceDir dir("sonde-trace", shm);
  std::string path = dir.path() + "/stream.bin";
  std::string error;
  auto file = TraceStreamFile::create(path, &error);
  ASSERT_TRUE(file) << error;
  if (file->direct())
    GTEST_SKIP() << shm << " does direct I/O here";
  ASSERT_TRUE(file->append("abcdef", 6, 2));
  ASSERT_TRUE(file->append(nullptr, 0, 5));
  ASSERT_TRUE(file->close());
  std::vector<uint8_t> bytes = fileBytes(path);
  ASSERT_EQ(bytes.size(), 16u + 6u + 16u);
  auto first = at<TraceFrameHeader>(bytes, 0);
  EXPECT_EQ(first.magic, kTraceFrameMagic);
  EXPECT_EQ(first.size, 6u);
  EXPECT_EQ(first.lostBefore, 2u);
  EXPECT_EQ(std::string(bytes.begin() + 16, bytes.begin() + 22), "abcdef");
  auto second = at<TraceFrameHeader>(bytes, 22);
  EXPECT_EQ(second.size, 0u);
  EXPECT_EQ(second.lostBefore, 5u);
}

struct Collected final : RecordSink {
  std::vector<int64_t> values;
  uint64_t lostRecords = 0;
  void event(const TraceEvent &e) override { values.push_back(e.args[0].i); }
  void lost(const RecordOrigin &, uint64_t count) override { lostRecords += count; }
  bool close(std::string *) override { return true; }
};

// The same records through a trace directory on either kind of file system.
class TraceDirectoryFrames : public ::testing::TestWithParam<const char *> {};

TEST_P(TraceDirectoryFrames, ReadBackWhatWasWritten) {
  if (!std::filesystem::is_directory(GetParam()))
    GTEST_SKIP() << "no " << GetParam();
  TraceDir dir("sonde-trace", GetParam());
  std::string error;
  std::optional<TraceSchema> schema = TraceSchema::build({{"%d\n", "test", 0}}, &error);
  ASSERT_TRUE(schema) << error;
  sonde_trace_clock clock{};
  clock.mult = 1;
  std::string trace = dir.path() + "/trace";
  auto writer = TraceDirectoryWriter::open(trace, *schema, clock, &error);
  ASSERT_TRUE(writer) << error;
  // Three chunks as a producer writes them: each restarts the time stream.
  const uint8_t longKind = SONDE_RECORD_ARG_LONG;
  sonde_record_desc desc{&longKind, 1};
  auto *chunk = static_cast<uint8_t *>(std::aligned_alloc(4096, 65536));
  int64_t value = 0;
  RecordOrigin origin{0, 10, 11};
  for (int c = 0; c < 3; ++c) {
    sonde_record_stream stream{};
    size_t used = 0;
    for (int i = 0; i < 1000 + c * 333; ++i) {
      SondeFormatArg arg;
      arg.i = value++ * 9973;
      used += sonde_record_encode(&stream, 0, 1000 + value, &desc, &arg, chunk + used);
    }
    if (c == 1)
      writer->lost(origin, 4);
    writer->chunk(origin, reinterpret_cast<const char *>(chunk), static_cast<uint32_t>(used));
  }
  writer->lost(origin, 2);
  ASSERT_TRUE(writer->close(&error)) << error;
  std::free(chunk);

  std::optional<TraceDirectory> read = TraceDirectory::open(trace, &error);
  ASSERT_TRUE(read) << error;
  Collected sink;
  ASSERT_TRUE(replayTraceDirectory(
      *read, sink, [](const std::string &) {}, &error))
      << error;
  ASSERT_EQ(sink.values.size(), static_cast<size_t>(value));
  for (int64_t i = 0; i < value; ++i)
    ASSERT_EQ(sink.values[static_cast<size_t>(i)], i * 9973);
  EXPECT_EQ(sink.lostRecords, 6u);
}

INSTANTIATE_TEST_SUITE_P(FileSystems, TraceDirectoryFrames, ::testing::Values("/tmp", "/dev/shm"),
                         [](const auto &info) {
                           return std::string(info.param[1] == 't' ? "Tmp" : "DevShm");
                         });

} // namespace
} // namespace sonde::session
