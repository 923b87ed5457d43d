// The code sonde -x copies into a page of the target and runs on one of its
// threads (InjectionCode.S), and the block of arguments and results it works
// on (on that thread's stack, below the resume frame; its address in rbx).
// The code loads the agent (dlopen, dlsym, sonde_agent_attach), says it is
// done, waits a while for sonde to read the results, then unmaps its own page
// and returns through the resume frame (ResumeFrame.h): every path ends with
// the thread back where it was, with no help from sonde.
//
// Included by the assembly: offsets only, no C++ below the #ifndef.
#pragma once

#define SONDE_INJECT_DLOPEN 0   // libc's dlopen
#define SONDE_INJECT_DLSYM 8    // libc's dlsym
#define SONDE_INJECT_DLERROR 16 // libc's dlerror
#define SONDE_INJECT_MUNMAP 24  // libc's munmap
#define SONDE_INJECT_PAGE 32    // the page holding the code
#define SONDE_INJECT_PAGE_SIZE 40
#define SONDE_INJECT_RESUME 48   // the resume frame's return slot: the final stack pointer
#define SONDE_INJECT_PATH 56     // the agent's path (a string in the block's area)
#define SONDE_INJECT_SYMBOL 64   // "sonde_agent_attach"
#define SONDE_INJECT_SOCKET 72   // the socket name, sonde_agent_attach's first argument
#define SONDE_INJECT_CONSUMER 80 // sonde's pid, its second
#define SONDE_INJECT_NAPS 88     // how many naps to wait for `go` before resuming anyway
#define SONDE_INJECT_NAP 96      // struct timespec: one nap (16 bytes)
#define SONDE_INJECT_HANDLE 112  // results: dlopen's handle
#define SONDE_INJECT_ENTRY 120   // dlsym's result
#define SONDE_INJECT_RESULT 128  // sonde_agent_attach's result
#define SONDE_INJECT_ERROR 136   // dlerror's message, when dlopen failed
#define SONDE_INJECT_DONE 144    // 32-bit: 1 once the results are written
#define SONDE_INJECT_GO 148      // 32-bit: sonde has read them
#define SONDE_INJECT_BLOCK_SIZE 152

#ifndef __ASSEMBLER__
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace sonde::session {

struct InjectionBlock {
  uint64_t dlopen, dlsym, dlerror, munmap;
  uint64_t page, pageSize;
  uint64_t resume;
  uint64_t path, symbol, socket, consumer;
  uint64_t naps;
  int64_t napSeconds, napNanoseconds;
  uint64_t handle, entry, result, error;
  uint32_t done, go;
};
static_assert(sizeof(InjectionBlock) == SONDE_INJECT_BLOCK_SIZE);
static_assert(offsetof(InjectionBlock, napSeconds) == SONDE_INJECT_NAP);
static_assert(offsetof(InjectionBlock, done) == SONDE_INJECT_DONE);
static_assert(offsetof(InjectionBlock, go) == SONDE_INJECT_GO);

// The machine code to copy into the target (position-independent; enter it at
// its first byte with rbx = the block, rsp 16-aligned below the block).
std::string_view injectionCode();

// Offsets in injectionCode() of the landing (see InjectionCode.S), of the
// instruction after its system call, and of the 8 bytes holding the address
// it goes on to.
struct LandingOffsets {
  size_t entry, stop, returnAddress;
};
LandingOffsets injectionLanding();

} // namespace sonde::session
#endif
