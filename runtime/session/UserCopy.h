// Reading this process's memory in place, where a bad address must not harm it:
// copy routines whose loads may fault (UserCopy.S), an exception table from
// those loads to their error path (as the kernel's user-copy routines have),
// and the gate that says whether a fault would reach a handler that uses it.
// Without the gate open (sonde itself, a -x agent, a thread with SIGSEGV or
// SIGBUS blocked), user memory is read with process_vm_readv instead.
#pragma once

#include <cstddef>
#include <cstdint>

extern "C" {
// Copies n bytes from src to dst: 0, or -1 if a load from src faulted.
long sonde_user_copy(void *dst, const void *src, size_t n);
// Copies up to n bytes from src to dst, through a NUL if one comes first: the
// bytes before that NUL (n if there is none), or -1 if a load from src faulted.
long sonde_user_copy_string(char *dst, const char *src, size_t n);
}

namespace sonde::session {

// Where a fault at `pc` inside the routines above resumes (their error path),
// or 0 when `pc` is not one of their loads. Async-signal-safe.
uintptr_t userCopyFixup(uintptr_t pc);

// Installed by the agent: true when, in the calling thread, a fault in the
// routines above is certain to reach the agent's handler.
using InPlaceReadGate = bool (*)();
void setInPlaceReadGate(InPlaceReadGate gate);
bool inPlaceReadsAllowed();

} // namespace sonde::session
