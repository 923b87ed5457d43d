// Helpers for the runtime/values tests: build a segment from a few descriptors.
#pragma once

#include "runtime/values/GlobalLayout.h"
#include "runtime/values/Segment.h"
#include "runtime/values/ValueAbi.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <vector>

namespace sonde::values::test {

inline GlobalDesc scalar(std::string name, ValueKind value) {
  GlobalDesc d;
  d.name = std::move(name);
  d.value = value;
  return d;
}

inline GlobalDesc array(std::string name, std::initializer_list<KeyKind> keys, ValueKind value,
                        uint32_t maxEntries = 0, bool wrap = false) {
  GlobalDesc d;
  d.name = std::move(name);
  d.value = value;
  d.keyCount = static_cast<uint8_t>(keys.size());
  size_t i = 0;
  for (KeyKind k : keys)
    d.keys[i++] = k;
  d.maxEntries = maxEntries;
  d.wrap = wrap;
  return d;
}

// A created segment plus its layout, with typed accessors by global name.
struct TestState {
  GlobalLayout layout;
  Segment segment;

  void *base() const { return segment.base(); }
  sonde_segment *seg() const { return segment.abi(); }
  uint64_t offset(const std::string &name) const {
    int i = layout.find(name);
    EXPECT_GE(i, 0) << name;
    return layout.placements()[static_cast<size_t>(i)].offset;
  }
  sonde_map *map(const std::string &name) const {
    return reinterpret_cast<sonde_map *>(static_cast<char *>(base()) + offset(name));
  }
  sonde_stats *stats(const std::string &name) const {
    return reinterpret_cast<sonde_stats *>(static_cast<char *>(base()) + offset(name));
  }
};

inline TestState makeState(std::vector<GlobalDesc> globals, sonde_limits limits = defaultLimits(),
                           uint32_t cpuSlots = hostCpuSlots()) {
  std::string error;
  auto layout = GlobalLayout::build(std::move(globals), limits, cpuSlots, &error);
  if (!layout)
    ADD_FAILURE() << error;
  auto segment = Segment::create(*layout, &error);
  if (!segment)
    ADD_FAILURE() << error;
  return TestState{std::move(*layout), std::move(*segment)};
}

inline sonde_key L(int64_t v) {
  sonde_key k;
  k.l = v;
  return k;
}
inline sonde_key S(const char *s) {
  sonde_key k;
  k.s = s;
  return k;
}

} // namespace sonde::values::test
