// Rewrites instructions other threads may be executing (cross-modifying code),
// and the process-wide barriers that protocol needs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace sonde::agent {

// Registers for membarrier's core-serializing command (or the plain expedited
// one). Without either, patching still works but relies on x86's coherent
// instruction fetch. Idempotent.
void initCodeSync();

// Makes every thread of the process pass a full memory barrier (and serialize
// its instruction stream when SYNC_CORE is registered) before returning.
// Returns false if membarrier is unavailable (then only this thread fenced).
bool syncAllThreads();

// True when syncAllThreads() reaches other threads, so the handler fast path may
// use a compiler-only fence against detach (see HandlerDispatch.cpp).
bool crossThreadFenceAvailable();

// Replaces the `size` (1 or 5) bytes at `address` with `bytes` while other
// threads may run them: int3 first, sync, the tail, sync, the first byte, sync.
// A thread reaching the site meanwhile traps (TrapHandler.cpp). The page is made
// writable only for the write. Callers serialize (SitePatches.cpp's lock).
bool writeCode(uintptr_t address, const uint8_t *bytes, size_t size, std::string *error);

} // namespace sonde::agent
