#include "runtime/values/SharedMapping.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace sonde::values {

namespace {

std::nullopt_t fail(std::string *error, const std::string &doing) {
  if (error)
    *error = doing + ": " + std::strerror(errno);
  return std::nullopt;
}

uint64_t pageSize() { return static_cast<uint64_t>(sysconf(_SC_PAGESIZE)); }

// The bytes a mapping of `size` reserves: whole pages, and one more page of
// zeros no other process can write (readable, private), so that a string some
// process left unterminated at the end of the file still ends there.
uint64_t reservedBytes(uint64_t size) {
  uint64_t page = pageSize();
  return (size + page - 1) / page * page + page;
}

// Maps `fd` shared over the start of a reservation ending in the guard page.
void *mapWithGuard(int fd, uint64_t size) {
  void *area = mmap(nullptr, reservedBytes(size), PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (area == MAP_FAILED)
    return MAP_FAILED;
  void *base = mmap(area, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
  if (base == MAP_FAILED) {
    int saved = errno;
    munmap(area, reservedBytes(size));
    errno = saved;
  }
  return base;
}

} // namespace

std::optional<SharedMapping> SharedMapping::create(const char *memfdName, uint64_t size,
                                                   const std::string &what, std::string *error) {
  int fd = memfd_create(memfdName, MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0)
    return fail(error, "memfd_create");
  if (ftruncate(fd, static_cast<off_t>(size)) != 0 ||
      fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    fail(error, "sizing " + what);
    close(fd);
    return std::nullopt;
  }
  void *base = mapWithGuard(fd, size);
  if (base == MAP_FAILED) {
    fail(error, "mapping " + what);
    close(fd);
    return std::nullopt;
  }
  return SharedMapping(fd, base, size);
}

std::optional<SharedMapping> SharedMapping::map(int fd, uint64_t minSize, const std::string &what,
                                                std::string *error) {
  struct stat st;
  if (fstat(fd, &st) != 0)
    return fail(error, "fstat of " + what);
  auto size = static_cast<uint64_t>(st.st_size);
  if (size < minSize) {
    if (error)
      *error = what + " is too small";
    return std::nullopt;
  }
  void *base = mapWithGuard(fd, size);
  if (base == MAP_FAILED)
    return fail(error, "mapping " + what);
  return SharedMapping(-1, base, size);
}

SharedMapping::SharedMapping(SharedMapping &&other) noexcept
    : fd_(other.fd_), base_(other.base_), size_(other.size_) {
  other.fd_ = -1;
  other.base_ = nullptr;
  other.size_ = 0;
}

SharedMapping &SharedMapping::operator=(SharedMapping &&other) noexcept {
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

SharedMapping::~SharedMapping() { release(); }

void SharedMapping::release() {
  if (base_)
    munmap(base_, reservedBytes(size_));
  if (fd_ >= 0)
    close(fd_);
  base_ = nullptr;
  fd_ = -1;
}

} // namespace sonde::values
