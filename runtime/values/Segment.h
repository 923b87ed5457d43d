// The shared-memory segment holding a session's script state.
//
// sonde creates it (a sealed memfd sized by the GlobalLayout) and hands the fd to
// each target's agent, which attaches: every mapping, at whatever address, sees the
// same state. The size is sealed so that no target can shrink the file under
// sonde's mapping (which would turn sonde's reads into SIGBUS). A created segment
// is shadowed (SegmentShadow.h): sonde trusts its own copy of the static headers,
// never what targets may have written over them.
#pragma once

#include "runtime/values/GlobalLayout.h"
#include "runtime/values/SegmentFormat.h"
#include "runtime/values/SharedMapping.h"

#include <optional>
#include <string>
#include <utility>

namespace sonde::values {

class Segment {
public:
  // A new segment for `layout`, initialized, in state STARTING.
  static std::optional<Segment> create(const GlobalLayout &layout, std::string *error);
  // Maps an existing segment from its fd (the fd stays owned by the caller). With a
  // non-zero `expectedFingerprint`, refuses a segment built for another layout.
  static std::optional<Segment> attach(int fd, uint64_t expectedFingerprint, std::string *error);

  Segment(Segment &&) noexcept = default;
  Segment &operator=(Segment &&other) noexcept;
  ~Segment();

  // The fd of the memfd (create) or -1 (attach).
  int fd() const { return mapping_.fd(); }
  void *base() const { return mapping_.base(); }
  uint64_t size() const { return mapping_.size(); }
  SegmentHeader &header() const { return *static_cast<SegmentHeader *>(base()); }
  sonde_segment *abi() const { return static_cast<sonde_segment *>(base()); }
  // The global at `placement.offset`, as the C ABI expects it.
  GlobalHeader *global(const GlobalPlacement &p) const { return globalAt(base(), p.offset); }

private:
  explicit Segment(SharedMapping mapping) : mapping_(std::move(mapping)) {}

  SharedMapping mapping_;
};

} // namespace sonde::values
