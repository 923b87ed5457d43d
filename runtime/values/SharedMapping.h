// A memfd mapped MAP_SHARED: the carrier of everything sonde shares with targets
// (the script state Segment, the relay channel). sonde creates it sealed at its
// size, so no target can shrink the file under another mapping (SIGBUS); a target
// maps it from the inherited fd. Owns the mapping, and the fd it created.
// Every mapping is followed by a private page of zeros: reading past the end
// of a string other processes left unterminated stops there.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace sonde::values {

class SharedMapping {
public:
  // A new zero-filled memfd of `size` bytes, sealed and mapped. Errors name `what`
  // ("the state segment").
  static std::optional<SharedMapping> create(const char *memfdName, uint64_t size,
                                             const std::string &what, std::string *error);
  // Maps the whole of an existing memfd (the fd stays owned by the caller);
  // refuses one smaller than `minSize`.
  static std::optional<SharedMapping> map(int fd, uint64_t minSize, const std::string &what,
                                          std::string *error);

  SharedMapping(SharedMapping &&other) noexcept;
  SharedMapping &operator=(SharedMapping &&other) noexcept;
  SharedMapping(const SharedMapping &) = delete;
  SharedMapping &operator=(const SharedMapping &) = delete;
  ~SharedMapping();

  // The memfd (create) or -1 (map).
  int fd() const { return fd_; }
  void *base() const { return base_; }
  uint64_t size() const { return size_; }

private:
  SharedMapping(int fd, void *base, uint64_t size) : fd_(fd), base_(base), size_(size) {}
  void release();

  int fd_ = -1;
  void *base_ = nullptr;
  uint64_t size_ = 0;
};

} // namespace sonde::values
