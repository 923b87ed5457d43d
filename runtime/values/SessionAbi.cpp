// C ABI: status messages, session state and the global locks.
#include "runtime/values/GlobalLocks.h"
#include "runtime/values/ProcessIdentity.h"
#include "runtime/values/SegmentFormat.h"
#include "runtime/values/SegmentShadow.h"
#include "runtime/values/ValueAbi.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <signal.h>
#include <unistd.h>

using namespace sonde::values;

namespace {

// Past a limit the session fails (unless it already finished); the caller is told
// once, for the count that crossed the limit, so it prints stap's message once.
int crossLimit(SegmentHeader &h, uint64_t count, uint32_t limit) {
  if (count <= limit)
    return 0;
  uint32_t s = h.sessionState.load();
  while (s != SONDE_SESSION_STOPPED && s != SONDE_SESSION_ERROR &&
         !h.sessionState.compare_exchange_weak(s, SONDE_SESSION_ERROR)) {
  }
  h.exitRequested.store(1);
  return count == uint64_t{limit} + 1 ? 1 : 0;
}

} // namespace

extern "C" {

const char *sonde_status_text(int status) {
  switch (status) {
  case SONDE_OK: return "";
  case SONDE_ERR_MAP_FULL: return "Array overflow, check MAXMAPENTRIES";
  case SONDE_ERR_EMPTY_AGGREGATE: return "empty aggregate";
  case SONDE_ERR_HIST_INDEX: return "histogram index out of range";
  case SONDE_ERR_SKIPPED: return "probe skipped: global lock contention";
  case SONDE_ERR_NO_MEMORY: return "out of memory for foreach";
  default: return "unknown runtime status";
  }
}

size_t sonde_map_overflow_message(const sonde_map *m, const char *name, char *buf, size_t cap) {
  const MapHeader *h = trustedMap(globalData<MapHeader>(reinterpret_cast<const GlobalHeader *>(m)));
  // Twice the limit, within what -D MAXMAPENTRIES accepts (CodegenOptions.cpp).
  uint64_t more = std::min<uint64_t>(uint64_t{h->maxEntries} * 2, uint64_t{1} << 28);
  int n = h->explicitSize
              ? std::snprintf(buf, cap, "Array overflow, check size limit (%u)", h->maxEntries)
          : name != nullptr
              ? std::snprintf(buf, cap,
                              "%s (%u entries) of global '%s': run with -D MAXMAPENTRIES=%llu "
                              "or declare it `global %s[%llu]`",
                              sonde_status_text(SONDE_ERR_MAP_FULL), h->maxEntries, name,
                              static_cast<unsigned long long>(more), name,
                              static_cast<unsigned long long>(more))
              : std::snprintf(buf, cap, "%s", sonde_status_text(SONDE_ERR_MAP_FULL));
  return n < 0 ? 0 : static_cast<size_t>(n);
}

const sonde_limits *sonde_segment_limits(const sonde_segment *seg) { return &trustedLimits(seg); }

int sonde_session_state(const sonde_segment *seg) {
  return static_cast<int>(segmentHeader(seg).sessionState.load(std::memory_order_acquire));
}

int sonde_session_running(const sonde_segment *seg) {
  return segmentHeader(seg).sessionState.load(std::memory_order_acquire) == SONDE_SESSION_RUNNING;
}

void sonde_session_set_state(sonde_segment *seg, int state) {
  segmentHeader(seg).sessionState.store(static_cast<uint32_t>(state), std::memory_order_release);
}

void sonde_session_request_exit(sonde_segment *seg) {
  SegmentHeader &h = segmentHeader(seg);
  uint32_t s = h.sessionState.load();
  while ((s == SONDE_SESSION_STARTING || s == SONDE_SESSION_RUNNING) &&
         !h.sessionState.compare_exchange_weak(s, SONDE_SESSION_STOPPING)) {
  }
  h.exitRequested.store(1);
}

int sonde_session_exit_requested(const sonde_segment *seg) {
  return segmentHeader(seg).exitRequested.load() != 0;
}

int sonde_session_note_error(sonde_segment *seg) {
  SegmentHeader &h = segmentHeader(seg);
  return crossLimit(h, h.errorCount.fetch_add(1) + 1, trustedLimits(seg).max_errors);
}

int sonde_session_note_skipped(sonde_segment *seg) {
  SegmentHeader &h = segmentHeader(seg);
  return crossLimit(h, h.skippedCount.fetch_add(1) + 1, trustedLimits(seg).max_skipped);
}

uint64_t sonde_session_error_count(const sonde_segment *seg) {
  return segmentHeader(seg).errorCount.load();
}

uint64_t sonde_session_skipped_count(const sonde_segment *seg) {
  return segmentHeader(seg).skippedCount.load();
}

void sonde_session_agent_enter(sonde_segment *seg) {
  uint32_t pid = static_cast<uint32_t>(getpid());
  for (auto &slot : segmentHeader(seg).agentPids) {
    uint32_t free = 0;
    if (slot.compare_exchange_strong(free, pid))
      return;
  }
  // More traced processes than slots: sonde just does not wait for this one.
}

void sonde_session_agent_leave(sonde_segment *seg) {
  uint32_t pid = static_cast<uint32_t>(getpid());
  for (auto &slot : segmentHeader(seg).agentPids) {
    uint32_t mine = pid;
    if (slot.compare_exchange_strong(mine, 0))
      return;
  }
}

uint32_t sonde_session_agent_count(const sonde_segment *seg) {
  uint32_t n = 0;
  for (const auto &slot : segmentHeader(seg).agentPids) {
    uint32_t pid = slot.load();
    // kill(pid, 0) also finds zombies: the caller reaps its own children first.
    // A word past the pid range would make kill() address a process group.
    if (plausiblePid(pid) && (kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH))
      ++n;
  }
  return n;
}

int sonde_locks_take(sonde_segment *seg, const uint64_t *global_offsets, uint32_t count) {
  return takeGlobalLocks(seg, global_offsets, count);
}

void sonde_locks_release(sonde_segment *seg, const uint64_t *global_offsets, uint32_t count) {
  releaseGlobalLocks(seg, global_offsets, count);
}

} // extern "C"
