#include "runtime/values/GlobalLayout.h"

#include "runtime/values/ScalarStats.h"
#include "runtime/values/SegmentFormat.h"

#include <unistd.h>

namespace sonde::values {

namespace {

constexpr uint32_t kMaxEntriesLimit = 1u << 28;

// (H - L) / W + 3 for a validated linear shape (H > L, W > 0), without overflow.
uint64_t linearBuckets(const GlobalDesc &d) {
  uint64_t span = static_cast<uint64_t>(d.histHigh) - static_cast<uint64_t>(d.histLow);
  return span / static_cast<uint64_t>(d.histWidth) + 3;
}

uint32_t histBuckets(const GlobalDesc &d) {
  switch (d.hist) {
  case HistKind::None: return 0;
  case HistKind::Log: return kMaxBuckets;
  case HistKind::Linear: return static_cast<uint32_t>(linearBuckets(d));
  }
  return 0;
}

StatShape shapeOf(const GlobalDesc &d) {
  StatShape s{};
  s.histKind = static_cast<uint32_t>(d.hist);
  s.buckets = histBuckets(d);
  s.low = d.histLow;
  s.high = d.histHigh;
  s.width = d.histWidth;
  s.varianceShift = d.varianceShift;
  s.usesVariance = d.usesVariance ? 1 : 0;
  return s;
}

uint64_t stringBytes(const sonde_limits &l) { return alignUp(l.max_string_len, 8); }

uint64_t slotStride(const GlobalDesc &d) { return alignUp(statBlockSize(histBuckets(d)), 64); }

uint32_t entriesOf(const GlobalDesc &d, const sonde_limits &l) {
  return d.maxEntries ? d.maxEntries : l.max_map_entries;
}

// Index slots: a power of two at least twice the entries, so probes stay short.
uint32_t indexSlots(uint32_t entries) {
  uint32_t n = 8;
  while (n < 2 * entries)
    n *= 2;
  return n;
}

// Fills the static part of a map header (also used just to size the map).
void mapGeometry(const GlobalDesc &d, const sonde_limits &l, MapHeader &h) {
  h.keyCount = d.keyCount;
  h.longKeysOnly = 1;
  uint64_t off = sizeof(EntryHeader);
  for (uint32_t c = 0; c < d.keyCount; ++c) {
    h.keyKinds[c] = static_cast<uint8_t>(d.keys[c]);
    if (d.keys[c] != KeyKind::Long)
      h.longKeysOnly = 0;
    h.keyOffsets[c] = static_cast<uint32_t>(off);
    off += d.keys[c] == KeyKind::Long ? 8 : stringBytes(l);
  }
  h.valueKind = static_cast<uint8_t>(d.value);
  h.valueOffset = static_cast<uint32_t>(off);
  switch (d.value) {
  case ValueKind::Long: off += 8; break;
  case ValueKind::String: off += stringBytes(l); break;
  case ValueKind::Stats: off += statBlockSize(histBuckets(d)); break;
  }
  h.entryStride = static_cast<uint32_t>(alignUp(off, 8));
  h.wrap = d.wrap ? 1 : 0;
  h.explicitSize = d.maxEntries ? 1 : 0;
  h.maxEntries = entriesOf(d, l);
  h.indexMask = indexSlots(h.maxEntries) - 1;
  h.maxStringLen = l.max_string_len;
  h.indexOffset = alignUp(sizeof(MapHeader), 64);
  h.entriesOffset = alignUp(h.indexOffset + (uint64_t{h.indexMask} + 1) * 8, 64);
  h.valueShape = shapeOf(d);
}

uint64_t dataSize(const GlobalDesc &d, const sonde_limits &l, uint32_t cpuSlots) {
  if (d.keyCount > 0) {
    MapHeader h{};
    mapGeometry(d, l, h);
    return h.entriesOffset + uint64_t{h.maxEntries} * h.entryStride;
  }
  switch (d.value) {
  case ValueKind::Long: return 8;
  case ValueKind::String: return stringBytes(l);
  case ValueKind::Stats: return sizeof(StatsHeader) + (uint64_t{cpuSlots} + 1) * slotStride(d);
  }
  return 0;
}

std::string checkGlobal(const GlobalDesc &d) {
  std::string who = "global '" + d.name + "': ";
  if (d.name.empty())
    return "global without a name";
  if (d.name.size() > kMaxGlobalNameLength)
    return "global name of " + std::to_string(d.name.size()) + " characters (at most " +
           std::to_string(kMaxGlobalNameLength) + ")";
  if (d.keyCount > kMaxKeys)
    return who + "too many array indexes (max 9)";
  if (d.keyCount == 0 && d.wrap)
    return who + "wrapping not supported for scalars";
  if (d.keyCount == 0 && d.maxEntries)
    return who + "a size limit needs an array";
  if (d.maxEntries > kMaxEntriesLimit)
    return who + "array size " + std::to_string(d.maxEntries) + " too large";
  if (d.value != ValueKind::Stats && (d.hist != HistKind::None || d.usesVariance))
    return who + "histogram or @variance on a non-stats value";
  if (d.varianceShift > 62)
    return who + "bit shift (" + std::to_string(d.varianceShift) + ") out of range <0..62>";
  if (d.hist == HistKind::Linear) {
    if (d.histWidth <= 0 || d.histHigh <= d.histLow)
      return who + "histogram needs a positive interval and stop > start";
    if (linearBuckets(d) > kMaxBuckets)
      return who + "histogram has more than " + std::to_string(kMaxBuckets - 2) + " buckets";
  }
  return {};
}

} // namespace

sonde_limits defaultLimits() {
  sonde_limits l{};
  l.max_string_len = 512;
  l.max_map_entries = 2048;
  l.max_action = 1000;
  l.max_action_interruptible = 10000;
  l.max_try_lock = 100;
  l.try_lock_delay_us = 10;
  l.max_errors = 0;
  l.max_skipped = 100;
  l.hist_elision = 2;
  l.suppress_time_limits = 0;
  l.max_backtrace = 20;
  return l;
}

uint32_t hostCpuSlots() {
  long n = sysconf(_SC_NPROCESSORS_CONF);
  return n < 1 ? 1 : static_cast<uint32_t>(n);
}

std::optional<GlobalLayout> GlobalLayout::build(std::vector<GlobalDesc> globals,
                                                const sonde_limits &limits, uint32_t cpuSlots,
                                                std::string *error) {
  auto fail = [&](std::string msg) {
    if (error)
      *error = std::move(msg);
    return std::nullopt;
  };
  if (limits.max_string_len < 2)
    return fail("MAXSTRINGLEN must be at least 2");
  if (limits.max_map_entries < 1 || limits.max_map_entries > kMaxEntriesLimit)
    return fail("MAXMAPENTRIES out of range");
  if (cpuSlots < 1)
    return fail("no CPU slots for stats");
  GlobalLayout layout;
  layout.limits_ = limits;
  layout.cpuSlots_ = cpuSlots;
  uint64_t cursor = kSegmentHeaderSize;
  for (const GlobalDesc &d : globals) {
    if (std::string problem = checkGlobal(d); !problem.empty())
      return fail(problem);
    if (layout.find(d.name) >= 0)
      return fail("global '" + d.name + "' declared twice");
    uint64_t size = kGlobalHeaderSize + dataSize(d, limits, cpuSlots);
    layout.placements_.push_back({cursor, cursor + kGlobalHeaderSize, size});
    layout.globals_.push_back(d);
    cursor = alignUp(cursor + size, 64);
  }
  layout.segmentSize_ = alignUp(cursor, 4096);
  return layout;
}

int GlobalLayout::find(const std::string &name) const {
  for (size_t i = 0; i < globals_.size(); ++i)
    if (globals_[i].name == name)
      return static_cast<int>(i);
  return -1;
}

void GlobalLayout::initialize(void *base) const {
  for (size_t i = 0; i < globals_.size(); ++i) {
    const GlobalDesc &d = globals_[i];
    GlobalHeader *g = globalAt(base, placements_[i].offset);
    if (d.keyCount > 0) {
      g->kind = GlobalKind::Map;
      mapGeometry(d, limits_, *globalData<MapHeader>(g));
      continue;
    }
    switch (d.value) {
    case ValueKind::Long: g->kind = GlobalKind::ScalarLong; break;
    case ValueKind::String:
      g->kind = GlobalKind::ScalarString;
      g->stringBytes = limits_.max_string_len;
      break;
    case ValueKind::Stats: {
      g->kind = GlobalKind::ScalarStats;
      auto *h = globalData<StatsHeader>(g);
      h->shape = shapeOf(d);
      h->slotCount = cpuSlots_;
      h->slotStride = static_cast<uint32_t>(slotStride(d));
      scalarStatsInit(h);
      break;
    }
    }
  }
}

} // namespace sonde::values
