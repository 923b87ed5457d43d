#include "runtime/values/SegmentShadow.h"

#include "runtime/values/CorruptionLatch.h"
#include "runtime/values/ProcessIdentity.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstring>
#include <vector>

namespace sonde::values {

namespace {

// The bytes of one global's headers as the segment held them when created:
// a GlobalHeader, then a MapHeader or a StatsHeader (whichever the kind has).
inline constexpr size_t kDataHeaderBytes = std::max(sizeof(MapHeader), sizeof(StatsHeader));
struct alignas(64) HeaderImage {
  unsigned char bytes[kGlobalHeaderSize + kDataHeaderBytes];
};

// The segment header up to its first dynamic field.
inline constexpr size_t kStaticHeaderBytes = offsetof(SegmentHeader, sessionState);

struct Shadow {
  const char *base;
  uint64_t size;
  unsigned char staticHeader[kStaticHeaderBytes];
  std::vector<uint64_t> offsets; // ascending, one per global
  std::vector<uint64_t> sizes;
  std::vector<std::string> names;
  std::vector<HeaderImage> images;
  CorruptionLatch latch;
};

constexpr size_t kMaxShadows = 16;
std::array<std::atomic<Shadow *>, kMaxShadows> shadows{};
using detail::shadowCount;

Shadow *shadowHolding(const void *address) {
  if (shadowCount.load(std::memory_order_acquire) == 0)
    return nullptr;
  const char *p = static_cast<const char *>(address);
  for (auto &slot : shadows) {
    Shadow *s = slot.load(std::memory_order_acquire);
    if (s && p >= s->base && p < s->base + s->size)
      return s;
  }
  return nullptr;
}

// The index of the global whose bytes hold `offset`, or -1.
long globalHolding(const Shadow &s, uint64_t offset) {
  auto it = std::upper_bound(s.offsets.begin(), s.offsets.end(), offset);
  if (it == s.offsets.begin())
    return -1;
  auto i = static_cast<size_t>(it - s.offsets.begin() - 1);
  return offset - s.offsets[i] < s.sizes[i] ? static_cast<long>(i) : -1;
}

// The image of the global whose header starts `headerDistance` bytes before
// `shared`, or null.
const unsigned char *imageOf(const void *shared, uint64_t headerDistance) {
  Shadow *s = shadowHolding(shared);
  if (!s)
    return nullptr;
  uint64_t offset = static_cast<uint64_t>(static_cast<const char *>(shared) - s->base);
  if (offset < headerDistance)
    return nullptr;
  auto it = std::lower_bound(s->offsets.begin(), s->offsets.end(), offset - headerDistance);
  if (it == s->offsets.end() || *it != offset - headerDistance)
    return nullptr;
  return s->images[static_cast<size_t>(it - s->offsets.begin())].bytes;
}

std::string where(const Shadow &s, const void *address) {
  uint64_t offset = static_cast<uint64_t>(static_cast<const char *>(address) - s.base);
  if (offset < kSegmentHeaderSize)
    return "the state segment's header";
  long i = globalHolding(s, offset);
  return i < 0 ? "the state segment" : "global '" + s.names[static_cast<size_t>(i)] + "'";
}

} // namespace

std::atomic<uint32_t> detail::shadowCount{0};

void shadowSegment(const void *base, uint64_t size, const GlobalLayout &layout) {
  auto *s = new Shadow{};
  s->base = static_cast<const char *>(base);
  s->size = size;
  std::memcpy(s->staticHeader, base, kStaticHeaderBytes);
  const auto &globals = layout.globals();
  const auto &placements = layout.placements();
  std::vector<size_t> order(globals.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return placements[a].offset < placements[b].offset; });
  for (size_t i : order) {
    const GlobalPlacement &p = placements[i];
    s->offsets.push_back(p.offset);
    s->sizes.push_back(p.size);
    s->names.push_back(globals[i].name);
    HeaderImage image{};
    std::memcpy(image.bytes, s->base + p.offset,
                std::min<uint64_t>(sizeof image.bytes, size - p.offset));
    s->images.push_back(image);
  }
  for (auto &slot : shadows) {
    Shadow *expected = nullptr;
    if (slot.compare_exchange_strong(expected, s, std::memory_order_acq_rel)) {
      shadowCount.fetch_add(1, std::memory_order_release);
      return;
    }
  }
  delete s; // more segments than slots: this one goes unshadowed
}

void dropSegmentShadow(const void *base) {
  for (auto &slot : shadows) {
    Shadow *s = slot.load(std::memory_order_acquire);
    if (s && s->base == base && slot.compare_exchange_strong(s, nullptr)) {
      shadowCount.fetch_sub(1, std::memory_order_release);
      delete s;
      return;
    }
  }
}

const GlobalHeader *detail::shadowedGlobal(const GlobalHeader *shared) {
  const unsigned char *image = imageOf(shared, 0);
  return image ? reinterpret_cast<const GlobalHeader *>(image) : shared;
}

const MapHeader *detail::shadowedMap(const MapHeader *shared) {
  const unsigned char *image = imageOf(shared, kGlobalHeaderSize);
  return image ? reinterpret_cast<const MapHeader *>(image + kGlobalHeaderSize) : shared;
}

const StatsHeader *detail::shadowedStats(const StatsHeader *shared) {
  const unsigned char *image = imageOf(shared, kGlobalHeaderSize);
  return image ? reinterpret_cast<const StatsHeader *>(image + kGlobalHeaderSize) : shared;
}

const sonde_limits &detail::shadowedLimits(const sonde_segment *seg) {
  if (const Shadow *s = shadowHolding(seg))
    return reinterpret_cast<const SegmentHeader *>(s->staticHeader)->limits;
  return segmentHeader(seg).limits;
}

bool inShadowedSegment(const void *address) { return shadowHolding(address) != nullptr; }

void noteSegmentCorruption(const void *address, const char *what, uint64_t value) {
  if (!inShadowedSegment(address))
    return;
  std::string text = what;
  size_t at = text.find("%u");
  if (at == std::string::npos)
    text += " (" + std::to_string(value) + ")";
  else
    text.replace(at, 2, std::to_string(value));
  noteSegmentCorruption(address, text);
}

void noteSegmentCorruption(const void *address, const std::string &what) {
  if (Shadow *s = shadowHolding(address))
    s->latch.note(where(*s, address) + ": " + what);
}

std::optional<std::string> segmentCorruption(const void *base) {
  Shadow *s = shadowHolding(base);
  if (!s || !s->latch.tripped())
    return std::nullopt;
  return s->latch.what();
}

std::optional<std::string> checkSegmentHeader(const void *base) {
  Shadow *s = shadowHolding(base);
  if (!s)
    return std::nullopt;
  const auto *h = static_cast<const SegmentHeader *>(base);
  std::string problem;
  if (std::memcmp(h, s->staticHeader, kStaticHeaderBytes) != 0) {
    const auto *mine = reinterpret_cast<const SegmentHeader *>(s->staticHeader);
    const char *field = std::memcmp(h->magic, mine->magic, sizeof h->magic) != 0 ? "magic"
                        : h->version != mine->version                            ? "version"
                        : h->cpuSlots != mine->cpuSlots                          ? "cpuSlots"
                        : h->totalSize != mine->totalSize                        ? "totalSize"
                        : h->layoutFingerprint != mine->layoutFingerprint ? "layoutFingerprint"
                        : h->globalCount != mine->globalCount             ? "globalCount"
                                                                          : "limits";
    problem = std::string("its static field '") + field + "' was overwritten";
  } else if (uint32_t state = h->sessionState.load(std::memory_order_relaxed);
             state > SONDE_SESSION_STOPPED) {
    problem = "its session state is " + std::to_string(state) + ", not a state";
  } else {
    for (const auto &slot : h->agentPids) {
      uint32_t pid = slot.load(std::memory_order_relaxed);
      if (pid != 0 && !plausiblePid(pid)) {
        problem = "an agent slot holds " + std::to_string(pid) + ", not a pid";
        break;
      }
    }
  }
  if (problem.empty())
    return std::nullopt;
  s->latch.note("the state segment's header: " + problem);
  return s->latch.what();
}

bool globalHeaderIntact(const GlobalHeader *shared) {
  const unsigned char *image = imageOf(shared, 0);
  if (!image)
    return true;
  const auto *mine = reinterpret_cast<const GlobalHeader *>(image);
  const auto *bytes = reinterpret_cast<const unsigned char *>(shared);
  // The kind and string size, then what follows up to the first dynamic field.
  size_t staticEnd = mine->kind == GlobalKind::Map           ? offsetof(MapHeader, count)
                     : mine->kind == GlobalKind::ScalarStats ? sizeof(StatsHeader)
                                                             : 0;
  if (std::memcmp(bytes + offsetof(GlobalHeader, kind), image + offsetof(GlobalHeader, kind),
                  offsetof(GlobalHeader, stringBytes) + sizeof(uint32_t) -
                      offsetof(GlobalHeader, kind)) == 0 &&
      std::memcmp(bytes + kGlobalHeaderSize, image + kGlobalHeaderSize, staticEnd) == 0)
    return true;
  noteSegmentCorruption(shared, "its header's static fields (kind, sizes, offsets) were "
                                "overwritten");
  return false;
}

} // namespace sonde::values
