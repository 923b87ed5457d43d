#include "runtime/values/Segment.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace sonde::values {

namespace {

std::optional<Segment> failPlain(std::string *error, std::string msg) {
  if (error)
    *error = std::move(msg);
  return std::nullopt;
}

std::optional<Segment> failWith(std::string *error, const std::string &what) {
  return failPlain(error, what + ": " + std::strerror(errno));
}

} // namespace

std::optional<Segment> Segment::create(const GlobalLayout &layout, std::string *error) {
  int fd = memfd_create("sonde-state", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0)
    return failWith(error, "memfd_create");
  uint64_t size = layout.segmentSize();
  if (ftruncate(fd, static_cast<off_t>(size)) != 0 ||
      fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    auto result = failWith(error, "sizing the state segment");
    close(fd);
    return result;
  }
  void *base = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    auto result = failWith(error, "mapping the state segment");
    close(fd);
    return result;
  }
  auto *h = static_cast<SegmentHeader *>(base);
  std::memcpy(h->magic, kSegmentMagic, sizeof(h->magic));
  h->version = kSegmentVersion;
  h->cpuSlots = layout.cpuSlots();
  h->totalSize = size;
  h->layoutFingerprint = layout.fingerprint();
  h->globalCount = static_cast<uint32_t>(layout.globals().size());
  h->limits = layout.limits();
  h->sessionState.store(SONDE_SESSION_STARTING);
  layout.initialize(base);
  return Segment(fd, base, size);
}

std::optional<Segment> Segment::attach(int fd, uint64_t expectedFingerprint, std::string *error) {
  struct stat st;
  if (fstat(fd, &st) != 0)
    return failWith(error, "fstat of the state segment");
  auto size = static_cast<uint64_t>(st.st_size);
  if (size < kSegmentHeaderSize)
    return failPlain(error, "state segment too small");
  void *base = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED)
    return failWith(error, "mapping the state segment");
  const auto *h = static_cast<const SegmentHeader *>(base);
  const char *problem = nullptr;
  if (std::memcmp(h->magic, kSegmentMagic, sizeof(h->magic)) != 0)
    problem = "not a sonde state segment";
  else if (h->version != kSegmentVersion)
    problem = "state segment version mismatch";
  else if (h->totalSize != size)
    problem = "state segment size mismatch";
  else if (expectedFingerprint != 0 && h->layoutFingerprint != expectedFingerprint)
    problem = "state segment built for another script";
  if (problem) {
    munmap(base, size);
    return failPlain(error, problem);
  }
  return Segment(-1, base, size);
}

Segment::Segment(Segment &&other) noexcept
    : fd_(other.fd_), base_(other.base_), size_(other.size_) {
  other.fd_ = -1;
  other.base_ = nullptr;
  other.size_ = 0;
}

Segment &Segment::operator=(Segment &&other) noexcept {
  if (this != &other) {
    release();
    fd_ = other.fd_;
    base_ = other.base_;
    size_ = other.size_;
    other.fd_ = -1;
    other.base_ = nullptr;
    other.size_ = 0;
  }
  return *this;
}

Segment::~Segment() { release(); }

void Segment::release() {
  if (base_)
    munmap(base_, size_);
  if (fd_ >= 0)
    close(fd_);
  base_ = nullptr;
  fd_ = -1;
}

} // namespace sonde::values
