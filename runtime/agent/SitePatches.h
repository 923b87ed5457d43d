// Marker sites patched in this process: attach (NOP -> jmp to a stub, or int3),
// detach (original NOP back), and the records the stubs and the trap handler
// resolve. The layer under the agent: it knows addresses and hooks, not modules.
#pragma once

#include "runtime/session/MarkerAbi.h"
#include "runtime/session/ModuleAbi.h"

#include <atomic>
#include <cstdint>
#include <string>

namespace sonde::agent {

// What runs when a patched site is reached. fromTrap: called from the SIGTRAP
// handler (1-byte sites, or a thread that met a site while it was being patched).
struct MarkerHook {
  void (*fire)(MarkerHook *self, sonde_marker_frame *frame, bool fromTrap);
};

// What the 5-byte entry saves around the handler (sonde_vector_save, decided by
// sonde from the code around the site): registers 0-15 at the CPU's widest
// vector size, xmm0-15 where nothing wider can be live, or xmm0-7 where the
// code touches no vector register.
enum class VectorSave : uint32_t {
  Full = SONDE_VECTOR_SAVE_FULL,
  Sse = SONDE_VECTOR_SAVE_SSE,
  Args = SONDE_VECTOR_SAVE_ARGS,
};

// One site ever patched in this process. Never freed: a stub or a pending trap
// may still reach it after it was detached.
struct PatchedSite {
  uintptr_t address = 0;
  uint32_t nopSize = 0;
  // Bytes the patch writes: 5 (a jmp to the stub) or 1 (an int3).
  uint32_t patchSize = 0;
  VectorSave save = VectorSave::Full;
  bool leanFrame = false; // the frame's rbp and r12-r15 slots are not written
  uint8_t original[5] = {};
  std::atomic<MarkerHook *> hook{nullptr}; // null: reaching the site does nothing
  uint8_t *stub = nullptr;                 // 5-byte and displaced sites
  // Displaced (stock) sites: the stub's relocated copy of the region, where a
  // thread trapping at the site goes on. Null for the others.
  uint8_t *resume = nullptr;
  uint32_t regionLength = 0; // displaced sites: bytes displaced
};

// A stock 1-byte site's jump path: its region's code (from the module) and the
// load bias of its object.
struct DisplacedSite {
  const sonde_displaced_code *code = nullptr;
  uintptr_t bias = 0;
};

// Once per process, before the first attach: membarrier registration, the
// SIGTRAP handler, vector-state detection. Idempotent.
bool initPatching(std::string *error);

// Patches the `nopSize`-byte NOP at `address` (5: `0f 1f 44 00 00`, 1: `90`) so
// that reaching it calls hook->fire, with `save` preserved around it and, with
// `leanFrame`, a frame whose rbp and r12-r15 slots are left unwritten (jump
// sites whose save is not Full; the trap path saves everything). A 1-byte site
// with `displaced` takes the jump path: its region (checked to hold the bytes
// sonde analysed) becomes a jmp to a stub running the relocated copy; it stays
// a trap, resuming in that copy, when a thread cannot be moved out of the
// region (ThreadSweep.h). Null (and error) if the bytes there are not the
// expected ones or no stub fits near it.
PatchedSite *attachSite(uintptr_t address, uint32_t nopSize, VectorSave save, bool leanFrame,
                        MarkerHook *hook, std::string *error, DisplacedSite displaced = {});

// Restores the NOP (and a displaced site's region). Threads already in the
// stub or trapping finish harmlessly.
void detachSite(PatchedSite *site);

// Whether the site's bytes are still this patch (its object may have been
// unloaded and loaded again at the same address). Its object must be mapped.
bool patchInPlace(const PatchedSite *site);

// The object holding the site was unloaded: drop the site without touching its
// (unmapped) bytes, so a later object at that address starts clean.
void forgetSite(PatchedSite *site);

// The site whose int3 is at `address` (signal-safe; no lock), or null.
PatchedSite *trapSiteAt(uintptr_t address);

// Held across fork so the child never inherits a half-done patch.
void lockPatching();
void unlockPatching();
// In a fork child, where the lock names the parent's thread as owner.
void resetPatchingLockInChild();

} // namespace sonde::agent

// Called by MarkerEntry.S with the frame it built.
extern "C" void sonde_agent_stub_dispatch(sonde_marker_frame *frame);
