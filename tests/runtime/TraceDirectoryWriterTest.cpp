// TraceDirectoryWriter: each stream's frames reach its file whole and in order,
// with the losses before them, whether they are staged and written together
// (small ones) or written straight from the caller's memory (large ones).
#include "runtime/session/TraceDirectory.h"

#include "TraceTestSupport.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

using namespace sonde::session;
using namespace sonde::testing;

namespace {

const sonde_trace_clock kClock{1000, 5, 1732250000000000000, 1, 0, SONDE_CLOCK_MONOTONIC};

struct Frame {
  uint64_t lostBefore;
  std::string data;
  bool operator==(const Frame &) const = default;
};

// The frames of a stream file: 16-byte headers (magic, size, losses before).
std::vector<Frame> framesOf(const std::string &path) {
  std::string file = readFile(path);
  std::vector<Frame> frames;
  for (size_t at = 0; at < file.size();) {
    uint32_t magic, size;
    uint64_t lost;
    EXPECT_LE(at + 16, file.size()) << path << ": a cut header at " << at;
    if (at + 16 > file.size())
      break;
    std::memcpy(&magic, file.data() + at, 4);
    std::memcpy(&size, file.data() + at + 4, 4);
    std::memcpy(&lost, file.data() + at + 8, 8);
    EXPECT_EQ(magic, kTraceFrameMagic) << path << " at " << at;
    EXPECT_LE(at + 16 + size, file.size()) << path << ": a cut frame at " << at;
    if (magic != kTraceFrameMagic || at + 16 + size > file.size())
      break;
    frames.push_back({lost, file.substr(at + 16, size)});
    at += 16 + size;
  }
  return frames;
}

TEST(TraceDirectoryWriter, FramesKeepTheirOrderAcrossStagedAndDirectWrites) {
  TraceDir dir("sonde-trace-writer");
  std::string error;
  auto schema = TraceSchema::build({{"%d\n", ""}}, &error);
  ASSERT_TRUE(schema) << error;
  auto writer = TraceDirectoryWriter::open(dir.path() + "/t", *schema, kClock, &error);
  ASSERT_TRUE(writer) << error;

  const RecordOrigin a{1, 100, 101}, b{2, 100, 102};
  std::vector<Frame> expectA, expectB;
  auto put = [&](const RecordOrigin &o, std::vector<Frame> &expect, char c, size_t size,
                 uint64_t lostBefore = 0) {
    std::string data(size, c);
    for (size_t i = 0; i < size; i += 97)
      data[i] = static_cast<char>(c + i % 7); // not one repeated byte
    if (lostBefore)
      writer->lost(o, lostBefore);
    writer->chunk(o, data.data(), static_cast<uint32_t>(data.size()));
    expect.push_back({lostBefore, data});
  };
  put(a, expectA, 'a', 4096);
  put(a, expectA, 'b', 4096, 3);
  put(b, expectB, 'c', 100);   // another file: a's staged frames go first
  put(a, expectA, 'd', 70000); // large: straight from the caller's memory
  put(a, expectA, 'e', 10);
  put(a, expectA, 'y', 100000); // large after a staged frame of the same file
  for (int i = 0; i < 80; ++i)  // more than one staging buffer's worth
    put(b, expectB, static_cast<char>('f' + i % 20), 4096 + i, i % 5 == 0 ? i : 0);
  writer->flush();
  put(a, expectA, 'z', 1);
  writer->lost(b, 7); // after b's last frame: an empty frame carries them at close
  expectB.push_back({7, ""});
  ASSERT_TRUE(writer->close(&error)) << error;

  EXPECT_EQ(framesOf(dir.path() + "/t/stream-100-101.bin"), expectA);
  EXPECT_EQ(framesOf(dir.path() + "/t/stream-100-102.bin"), expectB);
  uint64_t bytes = 0;
  for (const auto *frames : {&expectA, &expectB})
    for (const Frame &f : *frames)
      bytes += 16 + f.data.size();
  EXPECT_EQ(writer->bytesWritten(), bytes);
}

} // namespace
