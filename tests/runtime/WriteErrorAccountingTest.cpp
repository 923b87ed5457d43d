// Write errors in each writer of sonde's output: the first error is kept with
// the file's name, nothing more is written, and what was not written is
// counted (bytes and lines for OutputSink; records for RecordTextBuffer, trace
// directory frames and CTF packets), so that delivered + lost = handed over.
// The writes fail for real: /dev/full, a pipe whose reader is gone, and files
// that reach RLIMIT_FSIZE (a write stops short at the limit, then EFBIG).
#include "runtime/session/OutputSink.h"
#include "runtime/session/RecordTextBuffer.h"
#include "runtime/session/TraceDirectory.h"
#include "runtime/transport/CtfWriter.h"
#include "runtime/values/SegmentFormat.h"

#include "TraceTestSupport.h"

#include <gtest/gtest.h>

#include <atomic>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <string>
#include <sys/resource.h>
#include <unistd.h>
#include <vector>

using namespace sonde::session;
using namespace sonde::testing;

namespace {

// Files this process writes stop at `bytes` while it lives (SIGXFSZ ignored,
// so a write past the limit fails with EFBIG instead of killing the test).
class FileSizeLimit {
public:
  explicit FileSizeLimit(rlim_t bytes) {
    getrlimit(RLIMIT_FSIZE, &saved_);
    rlimit limit{bytes, saved_.rlim_max};
    setrlimit(RLIMIT_FSIZE, &limit);
    savedHandler_ = signal(SIGXFSZ, SIG_IGN);
  }
  ~FileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &saved_);
    signal(SIGXFSZ, savedHandler_);
  }

private:
  rlimit saved_{};
  sighandler_t savedHandler_;
};

TEST(OutputSinkWriteError, KeptWithTheFileNameAndLossesCounted) {
  int fd = open("/dev/full", O_WRONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  sonde::values::OutputAccounting shared{};
  {
    OutputSink sink(fd, "/dev/full");
    sink.countLossesIn(&shared);
    EXPECT_EQ(sink.write("one\ntwo\n", 8), 0u);
    EXPECT_EQ(sink.failure(), "cannot write '/dev/full': No space left on device");
    // Nothing more is tried; all of it counts.
    EXPECT_EQ(sink.write("three\nfour", 10), 0u);
    EXPECT_EQ(sink.lost().bytes, 18u);
    EXPECT_EQ(sink.lost().lines, 3u);
  }
  EXPECT_EQ(shared.writeErrno.load(), ENOSPC);
  EXPECT_EQ(shared.bytesLost.load(), 18u);
  EXPECT_EQ(shared.linesLost.load(), 3u);
  close(fd);
}

TEST(OutputSinkWriteError, StandardOutputIsNamedSo) {
  int fd = open("/dev/full", O_WRONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  OutputSink sink(fd);
  sink.write("x\n", 2);
  EXPECT_EQ(sink.failure(), "cannot write to standard output: No space left on device");
  close(fd);
}

TEST(OutputSinkWriteError, AShortWriteCountsWhatItDidNotWrite) {
  TraceDir dir("sonde-write-error");
  std::string path = dir.path() + "/out";
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  OutputSink sink(fd, path);
  {
    FileSizeLimit limit(10);
    EXPECT_EQ(sink.write("aaaa\nbbbb\ncccc\n", 15), 10u);
    EXPECT_EQ(sink.write("dd\n", 3), 0u);
  }
  EXPECT_EQ(sink.failure(), "cannot write '" + path + "': " + std::strerror(EFBIG));
  EXPECT_EQ(sink.lost().bytes, 8u);
  EXPECT_EQ(sink.lost().lines, 2u);
  EXPECT_EQ(readFile(path), "aaaa\nbbbb\n");
  close(fd);
}

std::atomic<int> pipeSignals{0};

TEST(OutputSinkWriteError, AClosedPipeRaisesNoSigpipe) {
  int fds[2];
  ASSERT_EQ(pipe2(fds, O_CLOEXEC), 0);
  close(fds[0]);
  pipeSignals = 0;
  struct sigaction count {
  }, saved{};
  count.sa_handler = [](int) { ++pipeSignals; };
  sigaction(SIGPIPE, &count, &saved);
  {
    OutputSink sink(fds[1]);
    EXPECT_EQ(sink.write("lost\n", 5), 0u);
    EXPECT_EQ(sink.failure(), std::string("cannot write to standard output: ") + strerror(EPIPE));
    EXPECT_EQ(sink.lost().lines, 1u);
  }
  sigset_t pending;
  sigpending(&pending);
  EXPECT_FALSE(sigismember(&pending, SIGPIPE));
  EXPECT_EQ(pipeSignals.load(), 0);
  sigaction(SIGPIPE, &saved, nullptr);
  close(fds[1]);
}

// A writer that takes `room` more bytes, then fails.
struct LimitedWriter {
  size_t room;
  std::string taken;
  size_t operator()(const char *data, size_t size) {
    size_t n = std::min(size, room);
    taken.append(data, n);
    room -= n;
    return n;
  }
};

TEST(RecordTextBuffer, RecordsNotWrittenWholeAreCounted) {
  LimitedWriter writer{7, ""};
  RecordTextBuffer buffer([&writer](const char *d, size_t n) { return writer(d, n); });
  for (const char *record : {"abc\n", "de\n", "fgh\n"}) {
    buffer.text() += record;
    buffer.endRecord();
  }
  buffer.text() += "{\"lost\":1}\n"; // between records: no record of its own
  buffer.flush();
  EXPECT_EQ(writer.taken, "abc\nde\n");
  EXPECT_EQ(buffer.recordsNotWritten(), 1u);
  buffer.text() += "x";
  buffer.endRecord();
  buffer.flush();
  EXPECT_EQ(buffer.recordsNotWritten(), 2u);
}

TEST(RecordTextBuffer, APartlyWrittenRecordIsNotWritten) {
  LimitedWriter writer{5, ""};
  RecordTextBuffer buffer([&writer](const char *d, size_t n) { return writer(d, n); });
  for (const char *record : {"abc\n", "def\n"}) {
    buffer.text() += record;
    buffer.endRecord();
  }
  buffer.flush();
  EXPECT_EQ(buffer.recordsNotWritten(), 1u);
}

const sonde_trace_clock kClock{1000, 5, 1732250000000000000, 1, 0, SONDE_CLOCK_MONOTONIC};

// `records` records of format 0 ("%d\n") as one chunk (a full timestamp first).
std::string chunkOf(const TraceSchema &schema, uint32_t records, int64_t first) {
  std::string chunk(records * 32 + 32, '\0');
  sonde_record_stream stream{};
  size_t at = 0;
  for (uint32_t i = 0; i < records; ++i) {
    SondeFormatArg arg{};
    arg.i = first + i;
    at += sonde_record_encode(&stream, 0, 1000 + i, &schema.table()[0], &arg,
                              reinterpret_cast<uint8_t *>(chunk.data() + at));
  }
  chunk.resize(at);
  return chunk;
}

// Frames of a stream file, whole ones only; false if one is cut.
bool wholeFrames(const std::string &path, std::vector<std::string> &frames) {
  std::string file = readFile(path);
  for (size_t at = 0; at < file.size();) {
    uint32_t size;
    if (at + 16 > file.size())
      return false;
    std::memcpy(&size, file.data() + at + 4, 4);
    if (at + 16 + size > file.size())
      return false;
    frames.push_back(file.substr(at + 16, size));
    at += 16 + size;
  }
  return true;
}

void traceDirectoryCase(uint32_t recordsPerChunk, rlim_t limitBytes) {
  TraceDir dir("sonde-write-error");
  std::string error;
  auto schema = TraceSchema::build({{"%d\n", ""}}, &error);
  ASSERT_TRUE(schema) << error;
  auto writer = TraceDirectoryWriter::open(dir.path() + "/t", *schema, kClock, &error);
  ASSERT_TRUE(writer) << error;
  const RecordOrigin origin{1, 100, 101};
  uint64_t handed = 0;
  {
    FileSizeLimit limit(limitBytes);
    for (int i = 0; i < 64; ++i) {
      std::string chunk = chunkOf(*schema, recordsPerChunk, i * int64_t{recordsPerChunk});
      writer->chunk(origin, chunk.data(), static_cast<uint32_t>(chunk.size()));
      handed += recordsPerChunk;
    }
    writer->flush();
  }
  std::string stream = dir.path() + "/t/stream-100-101.bin";
  EXPECT_FALSE(writer->close(&error));
  EXPECT_EQ(error, "cannot write '" + stream + "': " + std::strerror(EFBIG));
  // The file ends with its last whole frame, and says how much it holds.
  std::vector<std::string> frames;
  ASSERT_TRUE(wholeFrames(stream, frames)) << "a frame is cut short";
  ASSERT_FALSE(frames.empty());
  EXPECT_EQ(writer->bytesWritten(), std::filesystem::file_size(stream));
  uint64_t inFile = 0;
  for (const std::string &f : frames)
    inFile += countRecords(*schema, f.data(), static_cast<uint32_t>(f.size()));
  EXPECT_GT(writer->recordsNotWritten(), 0u);
  EXPECT_EQ(inFile + writer->recordsNotWritten(), handed);
  // The index (small enough for the limit's end) says what is missing.
  auto trace = TraceDirectory::open(dir.path() + "/t", &error);
  ASSERT_TRUE(trace) << error;
  EXPECT_TRUE(trace->damage.empty()) << trace->damage.front();
  EXPECT_EQ(trace->notWritten, writer->recordsNotWritten());
}

TEST(TraceDirectoryWriteError, StagedFramesStopAtTheLastWholeOne) {
  traceDirectoryCase(100, 20000); // about 300-byte frames, staged
}

TEST(TraceDirectoryWriteError, LargeFramesStopAtTheLastWholeOne) {
  traceDirectoryCase(30000, 400000); // about 90 KB frames, written directly
}

TEST(CtfWriteError, TheStreamEndsWithItsLastWholePacket) {
  TraceDir dir("sonde-write-error");
  std::string error;
  using namespace sonde::transport;
  auto writer = CtfWriter::open(dir.path() + "/ctf", "t", CtfClock{"c", 1000000000, 0, 0}, &error);
  ASSERT_TRUE(writer) << error;
  ASSERT_TRUE(writer->defineEvent(0, "e", {{"v", CtfFieldKind::Signed64}}, &error)) << error;
  uint64_t accepted = 0;
  {
    FileSizeLimit limit(3 * CtfStream::kPacketSize + 1000);
    std::vector<CtfValue> values{CtfValue(int64_t{7})};
    for (uint64_t t = 1; t < 100000; ++t) {
      if (!writer->write(1, t, 0, values, &error))
        break;
      ++accepted;
    }
  }
  EXPECT_EQ(error, "cannot write '" + dir.path() + "/ctf/stream_1': " + std::strerror(EFBIG));
  std::string stream = dir.path() + "/ctf/stream_1";
  EXPECT_EQ(std::filesystem::file_size(stream), 3 * CtfStream::kPacketSize);
  // Each packet: an 80-byte header, then 28-byte events (id, time, vpid, vtid, v).
  uint64_t perPacket = (CtfStream::kPacketSize - 80) / 28;
  EXPECT_EQ(writer->eventsNotWritten(), accepted - 3 * perPacket);
  EXPECT_GT(writer->eventsNotWritten(), 0u);
  writer->close(&error);
}

} // namespace
