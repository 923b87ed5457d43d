// One stream file of a trace directory being written (TraceDirectory.h): frames
// appended one write each. Where the file system does direct I/O (statx's
// STATX_DIOALIGN), frames are aligned and written with O_DIRECT, so a full
// sub-buffer goes from the ring to the disk without a copy into the page cache
// (the largest part of what recording costs sonde); elsewhere (tmpfs) frames
// are compact and buffered. Either kind of frame reads back the same.
//
// Frame kinds, little-endian:
//   compact  [u32 "SNDF"][u32 size][u64 lost before][size bytes]
//   aligned  [u32 "SNDA"][u32 size][u64 lost before][u32 header bytes]
//            [u32 frame bytes] ... data at the header bytes' offset, zero
//            padding to the frame bytes (both multiples of the alignment)
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

namespace sonde::session {

inline constexpr uint32_t kTraceFrameMagic = 0x46444e53;        // "SNDF"
inline constexpr uint32_t kTraceAlignedFrameMagic = 0x41444e53; // "SNDA"

struct TraceFrameHeader {
  uint32_t magic;
  uint32_t size;
  uint64_t lostBefore;
};
static_assert(sizeof(TraceFrameHeader) == 16);

struct TraceAlignedFrameHeader {
  TraceFrameHeader frame; // magic kTraceAlignedFrameMagic
  uint32_t headerBytes;   // where the data starts, from the frame's start
  uint32_t frameBytes;    // where the next frame starts
};
static_assert(sizeof(TraceAlignedFrameHeader) == 24);

class TraceStreamFile {
public:
  // Creates (truncates) the file at `path`.
  static std::unique_ptr<TraceStreamFile> create(const std::string &path, std::string *error);
  ~TraceStreamFile();
  TraceStreamFile(const TraceStreamFile &) = delete;
  TraceStreamFile &operator=(const TraceStreamFile &) = delete;

  // Appends a frame of `size` bytes at `data` (none when size is 0); false
  // with errno set when it could not be written whole.
  bool append(const char *data, uint32_t size, uint64_t lostBefore);
  // Closes the file; false with errno set when that reports an error.
  bool close();
  // The bytes written, padding included.
  uint64_t bytes() const { return end_; }
  bool direct() const { return direct_; }

private:
  TraceStreamFile(int fd, uint32_t align, uint32_t memAlign)
      : fd_(fd), direct_(align != 0), align_(align), memAlign_(memAlign) {}
  bool appendAligned(const char *data, uint32_t size, uint64_t lostBefore);
  bool appendCompact(const char *data, uint32_t size, uint64_t lostBefore);
  char *bounce(size_t bytes);

  int fd_;
  bool direct_;
  uint32_t align_, memAlign_; // offsets and lengths; buffer addresses
  uint64_t end_ = 0;
  std::unique_ptr<char, decltype(&std::free)> bounce_{nullptr, &std::free};
  size_t bounceBytes_ = 0;
};

} // namespace sonde::session
