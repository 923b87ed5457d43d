#include "runtime/session/TraceStreamFile.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

namespace sonde::session {

namespace {

uint64_t roundUp(uint64_t v, uint32_t align) { return (v + align - 1) / align * align; }

bool isPowerOfTwo(uint32_t v) { return v != 0 && (v & (v - 1)) == 0; }

// pwritev until every byte of iov[0, count) is at `offset` on.
bool writeAllAt(int fd, iovec *iov, int count, uint64_t offset) {
  while (count > 0) {
    ssize_t n = ::pwritev(fd, iov, count, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return false;
    if (n == 0) {
      errno = EIO;
      return false;
    }
    offset += static_cast<uint64_t>(n);
    size_t done = static_cast<size_t>(n);
    for (; count > 0 && done >= iov->iov_len; ++iov, --count)
      done -= iov->iov_len;
    if (count > 0) {
      iov->iov_base = static_cast<char *>(iov->iov_base) + done;
      iov->iov_len -= done;
    }
  }
  return true;
}

} // namespace

std::unique_ptr<TraceStreamFile> TraceStreamFile::create(const std::string &path,
                                                         std::string *error) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    *error = "cannot write '" + path + "': " + std::strerror(errno);
    return nullptr;
  }
  uint32_t align = 0, memAlign = 0;
  struct statx sx {};
  if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &sx) == 0 && (sx.stx_mask & STATX_DIOALIGN) &&
      isPowerOfTwo(sx.stx_dio_offset_align) && sx.stx_dio_offset_align <= (1u << 16) &&
      isPowerOfTwo(sx.stx_dio_mem_align) && sx.stx_dio_mem_align <= 4096) {
    int flags = fcntl(fd, F_GETFL);
    if (flags >= 0 && fcntl(fd, F_SETFL, flags | O_DIRECT) == 0) {
      align = sx.stx_dio_offset_align;
      memAlign = sx.stx_dio_mem_align;
    }
  }
  return std::unique_ptr<TraceStreamFile>(new TraceStreamFile(fd, align, memAlign));
}

TraceStreamFile::~TraceStreamFile() { close(); }

bool TraceStreamFile::close() {
  if (fd_ < 0)
    return true;
  int rc = ::close(fd_);
  fd_ = -1;
  return rc == 0;
}

bool TraceStreamFile::append(const char *data, uint32_t size, uint64_t lostBefore) {
  if (direct_) {
    if (appendAligned(data, size, lostBefore))
      return true;
    if (errno != EINVAL)
      return false;
    // The file system refused this direct write after all: buffered from now on.
    int flags = fcntl(fd_, F_GETFL);
    if (flags < 0 || fcntl(fd_, F_SETFL, flags & ~O_DIRECT) != 0)
      return false;
    direct_ = false;
  }
  return appendCompact(data, size, lostBefore);
}

// [header block][the data's whole blocks, from where they are when the address
// allows][the rest, copied and zero-padded to a block].
bool TraceStreamFile::appendAligned(const char *data, uint32_t size, uint64_t lostBefore) {
  const uint32_t header = static_cast<uint32_t>(roundUp(sizeof(TraceAlignedFrameHeader), align_));
  const uint64_t frameBytes = header + roundUp(size, align_);
  bool inPlace = reinterpret_cast<uintptr_t>(data) % memAlign_ == 0;
  size_t whole = inPlace ? size / align_ * align_ : 0;
  size_t rest = size - whole, restPadded = roundUp(rest, align_);
  char *b = bounce(header + restPadded);
  if (!b)
    return false;
  std::memset(b, 0, header);
  TraceAlignedFrameHeader h{
      {kTraceAlignedFrameMagic, size, lostBefore}, header, static_cast<uint32_t>(frameBytes)};
  std::memcpy(b, &h, sizeof h);
  if (rest > 0)
    std::memcpy(b + header, data + whole, rest);
  std::memset(b + header + rest, 0, restPadded - rest);
  iovec parts[3];
  int count = 0;
  parts[count++] = {b, header};
  if (whole > 0)
    parts[count++] = {const_cast<char *>(data), whole};
  if (restPadded > 0)
    parts[count++] = {b + header, restPadded};
  if (!writeAllAt(fd_, parts, count, end_))
    return false;
  end_ += frameBytes;
  return true;
}

bool TraceStreamFile::appendCompact(const char *data, uint32_t size, uint64_t lostBefore) {
  TraceFrameHeader h{kTraceFrameMagic, size, lostBefore};
  iovec parts[2] = {{&h, sizeof h}, {const_cast<char *>(data), size}};
  if (!writeAllAt(fd_, parts, size > 0 ? 2 : 1, end_))
    return false;
  end_ += sizeof h + size;
  return true;
}

// Direct I/O buffers must be aligned in memory too.
char *TraceStreamFile::bounce(size_t bytes) {
  if (bytes > bounceBytes_) {
    size_t capacity = roundUp(bytes, 4096);
    bounce_.reset(static_cast<char *>(std::aligned_alloc(4096, capacity)));
    bounceBytes_ = bounce_ ? capacity : 0;
  }
  return bounce_.get();
}

} // namespace sonde::session
