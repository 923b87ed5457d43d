#include "runtime/values/SegmentCheck.h"

#include "runtime/values/GlobalLocks.h"
#include "runtime/values/MapTable.h"
#include "runtime/values/ProcessIdentity.h"
#include "runtime/values/ScalarStats.h"
#include "runtime/values/SegmentShadow.h"

#include <cstring>
#include <string>

namespace sonde::values {

namespace {

void checkGlobal(GlobalHeader *g, const GlobalDesc &d, const sonde_limits &limits) {
  if (!globalHeaderIntact(g))
    return;
  if (d.keyCount > 0) {
    MapTable(globalData<MapHeader>(g)).check();
  } else if (d.value == ValueKind::Stats) {
    scalarStatsCheck(globalData<StatsHeader>(g));
  } else if (d.value == ValueKind::String &&
             !std::memchr(globalData<char>(g), '\0', limits.max_string_len)) {
    noteSegmentCorruption(g, "its string is not terminated");
  }
}

} // namespace

std::optional<std::string> checkSegment(const Segment &segment, const GlobalLayout &layout,
                                        bool handlersDone) {
  void *base = segment.base();
  if (std::optional<std::string> damage = checkSegmentHeader(base))
    return damage;
  for (size_t i = 0; i < layout.globals().size(); ++i) {
    if (segmentCorruption(base))
      break;
    GlobalHeader *g = globalAt(base, layout.placements()[i].offset);
    uint32_t holder = 0;
    LockAttempt lock = tryGlobalLock(g, &holder);
    // A traced process stuck in a handler (stopped, say) may still hold a lock
    // after its agent left; sonde's own handlers have all returned by now.
    if (lock == LockAttempt::Held && handlersDone && holder == myPid())
      noteSegmentCorruption(g, "its lock word names sonde (pid " + std::to_string(holder) +
                                   "), which runs no handler any more");
    if (lock != LockAttempt::Taken)
      continue;
    checkGlobal(g, layout.globals()[i], layout.limits());
    uint64_t offset = layout.placements()[i].offset;
    releaseGlobalLocks(base, &offset, 1);
  }
  return segmentCorruption(base);
}

} // namespace sonde::values
