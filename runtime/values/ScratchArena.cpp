#include "runtime/values/ScratchArena.h"

#include <sys/mman.h>

namespace sonde::values {

namespace {

constexpr size_t kMinChunkBytes = 256 * 1024;

struct Chunk {
  Chunk *next;
  size_t capacity; // usable bytes after the header
  size_t used;
};
constexpr size_t kHeaderBytes = (sizeof(Chunk) + 15) & ~size_t{15};

char *chunkData(Chunk *c) { return reinterpret_cast<char *>(c) + kHeaderBytes; }

Chunk *mapChunk(size_t bytes) {
  size_t total = kHeaderBytes + (bytes > kMinChunkBytes ? bytes : kMinChunkBytes);
  total = (total + 4095) & ~size_t{4095};
  void *p = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    return nullptr;
  auto *c = static_cast<Chunk *>(p);
  c->next = nullptr;
  c->capacity = total - kHeaderBytes;
  c->used = 0;
  return c;
}

// Chunks before the current one (detail::scratchCurrent, and it up to `used`)
// hold live allocations; the ones after it are spare.
struct Arena {
  Chunk *first = nullptr;

  ~Arena() {
    for (Chunk *c = first; c;) {
      Chunk *next = c->next;
      munmap(c, kHeaderBytes + c->capacity);
      c = next;
    }
    // An agent's exit-time probes can run after this thread's TLS destructors.
    first = nullptr;
    detail::scratchCurrent = nullptr;
  }
};

thread_local Arena arena;

Chunk *current() { return static_cast<Chunk *>(detail::scratchCurrent); }

} // namespace

namespace detail {
thread_local void *scratchCurrent = nullptr;

void scratchReleaseHeld() {
  scratchCurrent = nullptr;
  if (arena.first)
    arena.first->used = 0;
}
} // namespace detail

void *scratchAllocate(size_t bytes, ScratchMark &mark) {
  bytes = (bytes + 15) & ~size_t{15};
  Chunk *c = current();
  mark.chunk = c;
  mark.used = c ? c->used : 0;
  if (c && c->capacity - c->used >= bytes) {
    void *p = chunkData(c) + c->used;
    c->used += bytes;
    return p;
  }
  Chunk *spare = c ? c->next : arena.first;
  if (!spare || spare->capacity < bytes) {
    Chunk *fresh = mapChunk(bytes);
    if (!fresh)
      return nullptr;
    fresh->next = spare;
    if (c)
      c->next = fresh;
    else
      arena.first = fresh;
    spare = fresh;
  }
  spare->used = bytes;
  detail::scratchCurrent = spare;
  return chunkData(spare);
}

void scratchRelease(const ScratchMark &mark) {
  auto *c = static_cast<Chunk *>(mark.chunk);
  if (!c) {
    scratchReleaseAll();
    return;
  }
  c->used = mark.used;
  detail::scratchCurrent = c;
}

} // namespace sonde::values
