// Per-site stubs for 5-byte markers, in executable pages within ±2 GiB of their
// sites (a `jmp rel32` reaches them). Stubs are never freed: a thread may be
// inside one long after its site was unpatched.
#pragma once

#include <cstdint>
#include <string>

namespace sonde::agent {

// Stub layout (40 bytes, 8-byte aligned):
//   +0  48 8d 64 24 80            lea -0x80(%rsp),%rsp   step over the red zone
//   +5  ff 15 0d 00 00 00         call *0xd(%rip)        the qword at +24
//   +11 48 8d a4 24 80 00 00 00   lea 0x80(%rsp),%rsp
//   +19 e9 <rel32>                jmp site+5
//   +24 qword: the common entry (MarkerEntry.S)
//   +32 qword: the site record the entry hands to the dispatch
inline constexpr uint64_t kStubSize = 40;
// From the call's return address (+11) to the record qword (+32).
inline constexpr uint64_t kStubRecordFromReturn = 21;

// A new stub for the 5-byte site at `site` whose call goes to `entry` with
// `record`; nullptr (and error) if no page within reach could be mapped.
uint8_t *makeStub(uintptr_t site, uintptr_t entry, const void *record, std::string *error);

} // namespace sonde::agent
