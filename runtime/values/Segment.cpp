#include "runtime/values/Segment.h"

#include "runtime/values/SegmentShadow.h"

#include <cstring>

namespace sonde::values {

std::optional<Segment> Segment::create(const GlobalLayout &layout, std::string *error) {
  uint64_t size = layout.segmentSize();
  auto mapping = SharedMapping::create("sonde-state", size, "the state segment", error);
  if (!mapping)
    return std::nullopt;
  void *base = mapping->base();
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
  shadowSegment(base, size, layout);
  return Segment(std::move(*mapping));
}

Segment &Segment::operator=(Segment &&other) noexcept {
  if (this != &other) {
    if (base())
      dropSegmentShadow(base());
    mapping_ = std::move(other.mapping_);
  }
  return *this;
}

Segment::~Segment() {
  if (base())
    dropSegmentShadow(base());
}

std::optional<Segment> Segment::attach(int fd, uint64_t expectedFingerprint, std::string *error) {
  auto mapping = SharedMapping::map(fd, kSegmentHeaderSize, "the state segment", error);
  if (!mapping)
    return std::nullopt;
  const auto *h = static_cast<const SegmentHeader *>(mapping->base());
  const char *problem = nullptr;
  if (std::memcmp(h->magic, kSegmentMagic, sizeof(h->magic)) != 0)
    problem = "not a sonde state segment";
  else if (h->version != kSegmentVersion)
    problem = "state segment version mismatch";
  else if (h->totalSize != mapping->size())
    problem = "state segment size mismatch";
  else if (expectedFingerprint != 0 && h->layoutFingerprint != expectedFingerprint)
    problem = "state segment built for another script";
  if (problem) {
    if (error)
      *error = problem;
    return std::nullopt;
  }
  return Segment(std::move(*mapping));
}

} // namespace sonde::values
