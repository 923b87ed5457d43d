#include "runtime/agent/StubPool.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sys/mman.h>
#include <vector>

namespace sonde::agent {

namespace {

constexpr uint64_t kPage = 4096;
// Keep both the site's jmp and the stub's jmp back comfortably inside rel32.
constexpr int64_t kReach = (int64_t{1} << 31) - 2 * int64_t{kPage};
constexpr uint64_t kLowest = 0x10000;            // below mmap_min_addr
constexpr uint64_t kHighest = 0x7ffffffff000ull; // top of the user address space

struct StubPage {
  uint8_t *base;
  uint64_t used;
};
// Guarded by the caller's lock (SitePatches.cpp). Never destroyed: patching
// may happen during exit, after static destructors.
std::vector<StubPage> &pages() {
  static auto *all = new std::vector<StubPage>;
  return *all;
}

bool reaches(uint64_t page, uint64_t site) {
  int64_t low = static_cast<int64_t>(page) - static_cast<int64_t>(site);
  int64_t high = low + static_cast<int64_t>(kPage);
  return low > -kReach && low < kReach && high > -kReach && high < kReach;
}

struct Range {
  uint64_t start, end;
};

std::vector<Range> mappedRanges() {
  std::vector<Range> out;
  FILE *f = std::fopen("/proc/self/maps", "re");
  if (!f)
    return out;
  unsigned long long start, end;
  char line[512];
  while (std::fgets(line, sizeof line, f)) {
    if (std::sscanf(line, "%llx-%llx", &start, &end) == 2)
      out.push_back({start, end});
  }
  std::fclose(f);
  return out;
}

// The free page nearest to `site`, or 0.
uint64_t nearestHole(uint64_t site) {
  std::vector<Range> maps = mappedRanges();
  uint64_t sitePage = site & ~(kPage - 1);
  uint64_t best = 0, bestDistance = ~uint64_t{0};
  uint64_t previousEnd = kLowest;
  auto consider = [&](uint64_t holeStart, uint64_t holeEnd) {
    if (holeEnd < holeStart + kPage)
      return;
    uint64_t candidate = sitePage < holeStart         ? holeStart
                         : sitePage > holeEnd - kPage ? holeEnd - kPage
                                                      : sitePage;
    uint64_t distance = candidate > site ? candidate - site : site - candidate;
    if (reaches(candidate, site) && distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  };
  for (const Range &r : maps) {
    if (r.start > previousEnd)
      consider(previousEnd, r.start);
    if (r.end > previousEnd)
      previousEnd = r.end;
  }
  if (previousEnd < kHighest)
    consider(previousEnd, kHighest);
  return best;
}

uint8_t *mapPageNear(uint64_t site, std::string *error) {
  // Another thread may map the hole between reading the maps and mmap: retry.
  for (int attempt = 0; attempt < 8; ++attempt) {
    uint64_t hole = nearestHole(site);
    if (!hole)
      break;
    void *p = mmap(reinterpret_cast<void *>(hole), kPage, PROT_READ | PROT_EXEC,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (p == reinterpret_cast<void *>(hole))
      return static_cast<uint8_t *>(p);
    if (p != MAP_FAILED) // a kernel without MAP_FIXED_NOREPLACE took it as a hint
      munmap(p, kPage);
  }
  *error = "no free page within 2 GiB of the site for its stub";
  return nullptr;
}

void writeHead(uint8_t *stub, uint64_t entry, const void *record) {
  static const uint8_t code[19] = {0x48, 0x8d, 0x64, 0x24, 0x80, 0xff, 0x15, 0xe5, 0xff, 0xff,
                                   0xff, 0x48, 0x8d, 0xa4, 0x24, 0x80, 0x00, 0x00, 0x00};
  std::memcpy(stub, &entry, 8);
  uint64_t recordAddress = reinterpret_cast<uint64_t>(record);
  std::memcpy(stub + 8, &recordAddress, 8);
  std::memcpy(stub + kStubCode, code, sizeof code);
}

} // namespace

Stub makeStub(uintptr_t site, uintptr_t entry, const void *record, size_t size,
              const ContinuationWriter &write, std::string *error) {
  const uint64_t total = (kStubContinuation + size + 7) & ~uint64_t{7};
  if (total > kPage) {
    *error = "the stub's continuation does not fit a page";
    return {};
  }
  StubPage *page = nullptr;
  for (StubPage &p : pages()) {
    if (p.used + total <= kPage && reaches(reinterpret_cast<uint64_t>(p.base), site)) {
      page = &p;
      break;
    }
  }
  if (!page) {
    uint8_t *base = mapPageNear(site, error);
    if (!base)
      return {};
    pages().push_back({base, 0});
    page = &pages().back();
  }
  // Other stubs of the page may be running: it stays executable while we write.
  if (mprotect(page->base, kPage, PROT_READ | PROT_WRITE | PROT_EXEC) != 0) {
    *error = std::string("cannot write a stub page: ") + std::strerror(errno);
    return {};
  }
  uint8_t *stub = page->base + page->used;
  writeHead(stub, entry, record);
  bool written = write(stub + kStubContinuation, error);
  if (written)
    page->used += total;
  mprotect(page->base, kPage, PROT_READ | PROT_EXEC);
  if (!written)
    return {};
  return {stub + kStubCode, stub + kStubContinuation};
}

bool writeJumpBack(uint8_t *at, uintptr_t site, std::string *error) {
  int64_t back =
      static_cast<int64_t>(site + 5) - static_cast<int64_t>(reinterpret_cast<uint64_t>(at) + 5);
  if (back != static_cast<int32_t>(back)) {
    *error = "the site is out of the stub's reach";
    return false;
  }
  int32_t rel = static_cast<int32_t>(back);
  at[0] = 0xe9;
  std::memcpy(at + 1, &rel, 4);
  return true;
}

} // namespace sonde::agent
