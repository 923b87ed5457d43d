// Per-thread scratch memory for foreach snapshots and map repair: a chain of mmap'd
// chunks used as a stack (LIFO marks), so nested loops and recursion work and no
// handler ever calls malloc (handlers may run in a target's signal context). Chunks
// are kept for reuse and unmapped when the thread exits.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sonde::values {

struct ScratchMark {
  void *chunk;
  uint64_t used;
};

// Returns 16-byte aligned memory and the mark to release it with; nullptr if the
// system has no memory left.
void *scratchAllocate(size_t bytes, ScratchMark &mark);

// Frees the allocation made with `mark` and everything allocated after it.
void scratchRelease(const ScratchMark &mark);

namespace detail {
// The chunk allocations are being made from, null when this thread holds none.
// Constant-initialised, so reading it is one TLS load (no init wrapper).
extern thread_local void *scratchCurrent;
void scratchReleaseHeld();
} // namespace detail

// Frees everything this thread allocated. Inline: it runs after every handler,
// and most handlers take no scratch.
inline void scratchReleaseAll() {
  if (detail::scratchCurrent)
    detail::scratchReleaseHeld();
}

} // namespace sonde::values
