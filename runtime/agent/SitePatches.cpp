#include "runtime/agent/SitePatches.h"

#include "runtime/agent/CodePatcher.h"
#include "runtime/agent/DisplacedCode.h"
#include "runtime/agent/StubPool.h"
#include "runtime/agent/ThreadSweep.h"
#include "runtime/agent/TrapHandler.h"
#include "runtime/agent/XState.h"

#include <cstdio>
#include <cstring>
#include <mutex>
#include <new>

extern "C" void sonde_agent_marker_entry();
extern "C" void sonde_agent_marker_entry_sse();
extern "C" void sonde_agent_marker_entry_args();
extern "C" void sonde_agent_marker_entry_sse_lean();
extern "C" void sonde_agent_marker_entry_args_lean();

namespace sonde::agent {

namespace {

constexpr uint8_t kNop5[5] = {0x0f, 0x1f, 0x44, 0x00, 0x00};
constexpr uint8_t kNop1 = 0x90;
constexpr uint8_t kInt3 = 0xcc;

// Open addressing over site addresses, read lock-free by the trap handler.
// Entries are only added or replaced by kRemoved under `lock`.
constexpr size_t kTrapSlots = 16384;
std::atomic<PatchedSite *> trapTable[kTrapSlots];
PatchedSite removedMarker;
PatchedSite *const kRemoved = &removedMarker;

size_t slotOf(uintptr_t address) { return (address * 0x9e3779b97f4a7c15ull) >> 50; }
static_assert(kTrapSlots == size_t{1} << 14);

std::recursive_mutex lock;

bool insertLocked(PatchedSite *site) {
  for (size_t i = slotOf(site->address), n = 0; n < kTrapSlots; i = (i + 1) % kTrapSlots, ++n) {
    PatchedSite *s = trapTable[i].load(std::memory_order_relaxed);
    if (!s || s == kRemoved) {
      trapTable[i].store(site, std::memory_order_release);
      return true;
    }
  }
  return false;
}

std::string hexAddress(uintptr_t a) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(a));
  return buf;
}

bool isExpectedNop(uintptr_t address, uint32_t nopSize) {
  const auto *p = reinterpret_cast<const uint8_t *>(address);
  return nopSize == 5 ? std::memcmp(p, kNop5, 5) == 0 : nopSize == 1 && p[0] == kNop1;
}

// The bytes the patch writes: int3, or a jmp to the stub.
void patchBytes(const PatchedSite *site, uint8_t out[5]) {
  if (site->patchSize == 1) {
    out[0] = kInt3;
    return;
  }
  out[0] = 0xe9;
  int32_t rel = static_cast<int32_t>(reinterpret_cast<intptr_t>(site->stub) -
                                     static_cast<intptr_t>(site->address + 5));
  std::memcpy(out + 1, &rel, 4);
}

bool patchIn(PatchedSite *site, std::string *error) {
  uint8_t bytes[5];
  patchBytes(site, bytes);
  return writeCode(site->address, bytes, site->patchSize, error);
}

// A displaced site: the int3 first, so that no thread enters the region any
// more; then the threads inside it moved to the stub's copy; then the jmp. A
// thread that cannot be moved keeps the int3 (the site traps, resuming in the
// copy, which is right whatever the region's bytes are).
bool patchDisplaced(PatchedSite *site, const sonde_displaced_code &code, std::string *error) {
  site->patchSize = 1;
  if (!patchIn(site, error))
    return false;
  std::string why;
  if (!moveThreadsOutOfRegion(code, site->address, reinterpret_cast<uintptr_t>(site->resume), &why))
    return true;
  site->patchSize = 5;
  if (!patchIn(site, error))
    site->patchSize = 1; // the page could not be made writable: the int3 stays
  return true;
}

// The jump entry for a save and frame kind.
void (*entryFor(VectorSave save, bool leanFrame))() {
  switch (save) {
  case VectorSave::Sse:
    return leanFrame ? &sonde_agent_marker_entry_sse_lean : &sonde_agent_marker_entry_sse;
  case VectorSave::Args:
    return leanFrame ? &sonde_agent_marker_entry_args_lean : &sonde_agent_marker_entry_args;
  case VectorSave::Full: break;
  }
  return &sonde_agent_marker_entry;
}

// A new record for the site, with its stub when it is patched with a jmp.
PatchedSite *newSite(uintptr_t address, uint32_t nopSize, VectorSave save, bool leanFrame,
                     DisplacedSite displaced, std::string *error) {
  auto *site = new PatchedSite;
  site->address = address;
  site->nopSize = nopSize;
  site->patchSize = nopSize;
  site->save = save;
  site->leanFrame = leanFrame;
  std::memcpy(site->original, reinterpret_cast<const void *>(address),
              displaced.code ? 5 : nopSize);
  if (nopSize == 5 || displaced.code) {
    auto entry = reinterpret_cast<uintptr_t>(entryFor(save, leanFrame));
    Stub stub = makeStub(
        address, entry, site, displaced.code ? displaced.code->code_size : 5,
        [&](uint8_t *at, std::string *e) {
          return displaced.code ? writeDisplaced(at, *displaced.code, displaced.bias, e)
                                : writeJumpBack(at, address, e);
        },
        error);
    if (!stub.code) {
      delete site;
      return nullptr;
    }
    site->stub = stub.code;
    if (displaced.code) {
      site->resume = stub.continuation;
      site->regionLength = displaced.code->length;
    }
  }
  return site;
}

} // namespace

bool initPatching(std::string *error) {
  std::lock_guard<std::recursive_mutex> g(lock);
  initCodeSync();
  detectXState();
  return installTrapHandler(error);
}

PatchedSite *attachSite(uintptr_t address, uint32_t nopSize, VectorSave save, bool leanFrame,
                        MarkerHook *hook, std::string *error, DisplacedSite displaced) {
  std::lock_guard<std::recursive_mutex> g(lock);
  PatchedSite *site = trapSiteAt(address);
  if (site && site->hook.load()) {
    *error = "site at " + hexAddress(address) + " is already attached";
    return nullptr;
  }
  if (displaced.code && (nopSize != 1 || displaced.code->length < 5 ||
                         std::memcmp(reinterpret_cast<const void *>(address),
                                     displaced.code->original, displaced.code->length) != 0)) {
    *error = "the " + std::to_string(displaced.code->length) + " bytes at " + hexAddress(address) +
             " are not the ones sonde read in the file";
    return nullptr;
  }
  if (!isExpectedNop(address, nopSize)) {
    *error = "no " + std::to_string(nopSize) + "-byte marker NOP at " + hexAddress(address);
    return nullptr;
  }
  if (nopSize != 5 && !displaced.code)
    save = VectorSave::Full;
  leanFrame = leanFrame && save != VectorSave::Full;
  // A displaced site's stub is its own (its copy is the module's code); the
  // others are reused when they are the same.
  if (!site || displaced.code || site->resume || site->nopSize != nopSize || site->save != save ||
      site->leanFrame != leanFrame) {
    PatchedSite *fresh = newSite(address, nopSize, save, leanFrame, displaced, error);
    if (!fresh)
      return nullptr;
    if (site)
      forgetSite(site);
    site = fresh;
    if (!insertLocked(site)) {
      *error = "too many marker sites";
      delete site;
      return nullptr;
    }
  }
  // The hook first: a thread trapping on the int3 mid-patch runs it.
  site->hook.store(hook, std::memory_order_release);
  if (!(displaced.code ? patchDisplaced(site, *displaced.code, error) : patchIn(site, error))) {
    site->hook.store(nullptr);
    return nullptr;
  }
  return site;
}

void detachSite(PatchedSite *site) {
  std::lock_guard<std::recursive_mutex> g(lock);
  if (!site->hook.exchange(nullptr))
    return;
  writeCode(site->address, site->original, site->patchSize, nullptr);
}

bool patchInPlace(const PatchedSite *site) {
  uint8_t bytes[5];
  patchBytes(site, bytes);
  return std::memcmp(reinterpret_cast<const void *>(site->address), bytes, site->patchSize) == 0;
}

void forgetSite(PatchedSite *site) {
  std::lock_guard<std::recursive_mutex> g(lock);
  site->hook.store(nullptr);
  for (auto &slot : trapTable) {
    PatchedSite *expected = site;
    if (slot.compare_exchange_strong(expected, kRemoved))
      break;
  }
}

PatchedSite *trapSiteAt(uintptr_t address) {
  for (size_t i = slotOf(address), n = 0; n < kTrapSlots; i = (i + 1) % kTrapSlots, ++n) {
    PatchedSite *s = trapTable[i].load(std::memory_order_acquire);
    if (!s)
      return nullptr;
    if (s != kRemoved && s->address == address)
      return s;
  }
  return nullptr;
}

void lockPatching() { lock.lock(); }
void unlockPatching() { lock.unlock(); }
void resetPatchingLockInChild() { new (&lock) std::recursive_mutex(); }

} // namespace sonde::agent

extern "C" __attribute__((visibility("hidden"))) void
sonde_agent_stub_dispatch(sonde_marker_frame *frame) {
  using namespace sonde::agent;
  auto *site =
      *reinterpret_cast<PatchedSite *const *>(frame->return_address + kStubRecordFromReturn);
  if (MarkerHook *h = site->hook.load(std::memory_order_acquire))
    h->fire(h, frame, false);
}
