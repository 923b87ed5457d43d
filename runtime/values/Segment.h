// The shared-memory segment holding a session's script state.
//
// sonde creates it (a sealed memfd sized by the GlobalLayout) and hands the fd to
// each target's agent, which attaches: every mapping, at whatever address, sees the
// same state. The size is sealed so that no target can shrink the file under
// sonde's mapping (which would turn sonde's reads into SIGBUS).
#pragma once

#include "runtime/values/GlobalLayout.h"
#include "runtime/values/SegmentFormat.h"

#include <optional>
#include <string>

namespace sonde::values {

class Segment {
public:
  // A new segment for `layout`, initialized, in state STARTING.
  static std::optional<Segment> create(const GlobalLayout &layout, std::string *error);
  // Maps an existing segment from its fd (the fd stays owned by the caller). With a
  // non-zero `expectedFingerprint`, refuses a segment built for another layout.
  static std::optional<Segment> attach(int fd, uint64_t expectedFingerprint, std::string *error);

  Segment(Segment &&other) noexcept;
  Segment &operator=(Segment &&other) noexcept;
  Segment(const Segment &) = delete;
  Segment &operator=(const Segment &) = delete;
  ~Segment();

  // The fd of the memfd (create) or -1 (attach).
  int fd() const { return fd_; }
  void *base() const { return base_; }
  uint64_t size() const { return size_; }
  SegmentHeader &header() const { return *static_cast<SegmentHeader *>(base_); }
  sonde_segment *abi() const { return static_cast<sonde_segment *>(base_); }
  // The global at `placement.offset`, as the C ABI expects it.
  GlobalHeader *global(const GlobalPlacement &p) const { return globalAt(base_, p.offset); }

private:
  Segment(int fd, void *base, uint64_t size) : fd_(fd), base_(base), size_(size) {}
  void release();

  int fd_ = -1;
  void *base_ = nullptr;
  uint64_t size_ = 0;
};

} // namespace sonde::values
