// Per-site stubs for markers patched with a jump, in executable pages within ±2 GiB of their
// sites (a `jmp rel32` reaches them). Stubs are never freed: a thread may be
// inside one long after its site was unpatched.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace sonde::agent {

// Stub layout (8-byte aligned):
//   +0  qword: the common entry (MarkerEntry.S)
//   +8  qword: the site record the entry hands to the dispatch
//   +16 48 8d 64 24 80            lea -0x80(%rsp),%rsp   the site's jmp lands here
//   +21 ff 15 e5 ff ff ff         call *-0x1b(%rip)      the qword at +0
//   +27 48 8d a4 24 80 00 00 00   lea 0x80(%rsp),%rsp
//   +35 the continuation: `jmp site+5` (5-byte sites), or a stock site's
//       displaced instructions relocated and the jump back (DisplacedCode.h)
inline constexpr uint64_t kStubCode = 16;
inline constexpr uint64_t kStubContinuation = 35;
// From the call's return address (+27) back to the record qword (+8).
inline constexpr int64_t kStubRecordFromReturn = -19;

struct Stub {
  uint8_t *code = nullptr;         // where the site's jmp goes
  uint8_t *continuation = nullptr; // where the stub goes on after the handler
};

// Writes `size` bytes of continuation at `at` (mapped writable): false (and
// error) if they cannot run there.
using ContinuationWriter = std::function<bool(uint8_t *at, std::string *error)>;

// A new stub for the site at `site` whose call goes to `entry` with `record`,
// its continuation written by `write`; no code (and error) if no page within
// reach could be mapped or the continuation cannot run there.
Stub makeStub(uintptr_t site, uintptr_t entry, const void *record, size_t size,
              const ContinuationWriter &write, std::string *error);

// The 5-byte site's continuation: `jmp site+5`.
bool writeJumpBack(uint8_t *at, uintptr_t site, std::string *error);

} // namespace sonde::agent
