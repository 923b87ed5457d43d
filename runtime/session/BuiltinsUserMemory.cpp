// Built-ins that read the probed process's memory, with stap's uconversions.stp
// semantics: user_string* and user_char ... user_uint64 (BuiltinAbi.h). The handler
// runs inside that process (the agent) or in sonde itself (begin/end/timer probes),
// so "user memory" is this process's own. A bad address must fail, never fault the
// target: where the agent vouches for its fault handler (UserCopy.h), it is read in
// place by copy routines whose faults resume at an error path; elsewhere with
// process_vm_readv, which fails with EFAULT. Both fail on exactly the same bytes.
#include "runtime/session/BuiltinAbi.h"
#include "runtime/session/Runtime.h"
#include "runtime/session/UserCopy.h"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <sys/uio.h>
#include <unistd.h>
#include <vector>

using namespace sonde::session;

namespace {

size_t cap(sonde_context *ctx) { return runtimeOf(ctx).maxStringLen(); }

void copyText(char *out, const char *text, size_t capacity) {
  std::strncpy(out, text, capacity - 1);
  out[capacity - 1] = '\0';
}

// Copies `size` bytes at `addr` of this process; false if any of them is unreadable.
bool readMemory(uint64_t addr, void *destination, size_t size, bool inPlace) {
  const void *source = reinterpret_cast<const void *>(static_cast<uintptr_t>(addr));
  if (inPlace)
    return sonde_user_copy(destination, source, size) == 0;
  iovec local{destination, size};
  iovec remote{const_cast<void *>(source), size};
  // A failed read sets errno, which in a marker handler is the target's.
  int savedErrno = errno;
  bool whole = process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == static_cast<ssize_t>(size);
  errno = savedErrno;
  return whole;
}

bool readMemory(uint64_t addr, void *destination, size_t size) {
  return readMemory(addr, destination, size, inPlaceReadsAllowed());
}

// Copies `count` bytes at `addr` (all in one page) into out, or with `toNul`
// up to a NUL: the bytes before the NUL (count if none), or -1 if unreadable.
long readChunk(uint64_t addr, char *out, size_t count, bool toNul, bool inPlace) {
  if (inPlace && toNul)
    return sonde_user_copy_string(out, reinterpret_cast<const char *>(addr), count);
  if (!readMemory(addr, out, count, inPlace))
    return -1;
  const void *nul = toNul ? std::memchr(out, '\0', count) : nullptr;
  return nul ? static_cast<const char *>(nul) - out : static_cast<long>(count);
}

// Copies up to `count` bytes at `addr` into out page by page, so that bytes
// just before an unreadable page are read (page protections are page-granular,
// so a chunk within one page is readable whole or not at all). With `toNul`,
// stops after a NUL. The bytes copied (the NUL not counted), and whether a
// fault ended the copy.
struct PageCopy {
  size_t bytes;
  bool faulted;
};
PageCopy copyPages(uint64_t addr, char *out, size_t count, bool toNul) {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  bool inPlace = inPlaceReadsAllowed();
  size_t done = 0;
  while (done < count) {
    uint64_t at = addr + done;
    size_t chunk = std::min(count - done, page - static_cast<size_t>(at % page));
    long read = at < addr ? -1 : readChunk(at, out + done, chunk, toNul, inPlace);
    if (read < 0)
      return {done, true};
    if (static_cast<size_t>(read) < chunk)
      return {done + static_cast<size_t>(read), false};
    done += chunk;
  }
  return {done, false};
}

// The kernel's strncpy_from_user: copies at most `count` bytes of the string at
// `addr`, through its NUL if that comes first. Returns -EFAULT on a fault.
long copyString(uint64_t addr, char *out, size_t count) {
  PageCopy copy = copyPages(addr, out, count, true);
  return copy.faulted ? -EFAULT : static_cast<long>(copy.bytes);
}

// How many of the `count` bytes at `addr` are readable before the first fault
// (page by page), copied into out.
size_t copyReadable(uint64_t addr, char *out, size_t count) {
  return copyPages(addr, out, count, false).bytes;
}

// user_string_n's core: at most n bytes (clamped to 1 + n in [1, MAXSTRINGLEN - 1]
// copied, the last replaced by NUL, as uconversions.stp does). Returns the copy's
// result: negative on a fault.
long readUserString(sonde_context *ctx, char *out, int64_t addr, int64_t n) {
  int64_t limit = static_cast<int64_t>(cap(ctx)) - 1;
  int64_t length = n >= limit - 1 ? limit : std::max<int64_t>(n + 1, 1);
  long rc = copyString(static_cast<uint64_t>(addr), out, static_cast<size_t>(length));
  if (rc >= 0)
    out[length - 1] = '\0';
  return rc;
}

// "user string copy fault -14 at 0x1234 [man error::fault]", stap's text.
void faultText(char *out, size_t size, long rc, int64_t addr) {
  std::snprintf(out, size, "user string copy fault %ld at 0x%" PRIx64 " [man error::fault]", rc,
                static_cast<uint64_t>(addr));
}

void userStringOrRaise(sonde_context *ctx, char *out, int64_t addr, int64_t n, uint32_t loc) {
  long rc = readUserString(ctx, out, addr, n);
  if (rc >= 0)
    return;
  copyText(out, "<unknown>", cap(ctx));
  char message[128];
  faultText(message, sizeof message, rc, addr);
  sonde_raise_message(ctx, message, loc);
}

void userStringOrWarn(sonde_context *ctx, char *out, int64_t addr, const char *warnMsg) {
  long rc = readUserString(ctx, out, addr, static_cast<int64_t>(cap(ctx)));
  if (rc >= 0)
    return;
  char message[128];
  faultText(message, sizeof message, rc, addr);
  sonde_out_warn(ctx, message);
  copyText(out, warnMsg, cap(ctx));
}

// The quoted forms' fallback on a fault: the address in hex, no error.
void addressText(sonde_context *ctx, char *out, int64_t addr) {
  std::snprintf(out, cap(ctx), "0x%" PRIx64, static_cast<uint64_t>(addr));
}

template <typename T>
int64_t readValue(sonde_context *ctx, int64_t addr, uint32_t loc, bool raise) {
  T value{};
  if (readMemory(static_cast<uint64_t>(addr), &value, sizeof value))
    return static_cast<int64_t>(value);
  if (raise) {
    char message[96];
    std::snprintf(message, sizeof message, "read fault [man error::fault] at 0x%" PRIx64,
                  static_cast<uint64_t>(addr));
    sonde_raise_message(ctx, message, loc);
  }
  return 0;
}

} // namespace

extern "C" {

void sonde_fn_user_string_n_2(sonde_context *ctx, char *out, int64_t addr, int64_t n,
                              uint32_t loc) {
  userStringOrRaise(ctx, out, addr, n, loc);
}

void sonde_fn_user_string_1(sonde_context *ctx, char *out, int64_t addr, uint32_t loc) {
  userStringOrRaise(ctx, out, addr, static_cast<int64_t>(cap(ctx)), loc);
}

void sonde_fn_user_string_n_3(sonde_context *ctx, char *out, int64_t addr, int64_t n,
                              const char *err_msg, uint32_t) {
  if (readUserString(ctx, out, addr, n) < 0)
    copyText(out, err_msg, cap(ctx));
}

void sonde_fn_user_string_2(sonde_context *ctx, char *out, int64_t addr, const char *err_msg,
                            uint32_t loc) {
  sonde_fn_user_string_n_3(ctx, out, addr, static_cast<int64_t>(cap(ctx)), err_msg, loc);
}

void sonde_fn_user_string_warn_2(sonde_context *ctx, char *out, int64_t addr, const char *warn_msg,
                                 uint32_t) {
  userStringOrWarn(ctx, out, addr, warn_msg);
}

void sonde_fn_user_string_warn_1(sonde_context *ctx, char *out, int64_t addr, uint32_t) {
  userStringOrWarn(ctx, out, addr, "");
}

void sonde_fn_user_string_quoted_1(sonde_context *ctx, char *out, int64_t addr, uint32_t) {
  std::vector<char> text(cap(ctx));
  if (readUserString(ctx, text.data(), addr, static_cast<int64_t>(cap(ctx))) < 0)
    addressText(ctx, out, addr);
  else
    sonde_str_string_quoted(text.data(), out, cap(ctx));
}

// user_string_n_quoted(addr, n) is (addr, n, MAXSTRINGLEN): a quoted text longer than
// MAXSTRINGLEN - 2 is cut and ends in `"...` (itself cut to MAXSTRINGLEN - 1).
void sonde_fn_user_string_n_quoted_2(sonde_context *ctx, char *out, int64_t addr, int64_t n,
                                     uint32_t) {
  size_t capacity = cap(ctx);
  std::vector<char> text(capacity);
  if (readUserString(ctx, text.data(), addr, n) < 0) {
    addressText(ctx, out, addr);
    return;
  }
  size_t length = sonde_str_string_quoted(text.data(), out, capacity);
  if (length > capacity - 2) {
    out[capacity - 4] = '\0';
    std::strncat(out, "\"...", capacity - 1 - std::strlen(out));
  }
}

// uconversions.stp: outlen is clamped to [0, MAXSTRINGLEN] (0 gives ""); inlen
// bytes are read, NULs included; on a fault, the address in hex, cut to outlen.
void sonde_fn_user_buffer_quoted_3(sonde_context *ctx, char *out, int64_t addr, int64_t inlen,
                                   int64_t outlen, uint32_t) {
  size_t capacity = cap(ctx);
  int64_t limit = std::clamp<int64_t>(outlen, 0, static_cast<int64_t>(capacity));
  out[0] = '\0';
  if (limit == 0)
    return;
  // The bytes the escaping may look at: inlen, limited as it limits it.
  size_t longest = capacity - 1;
  size_t wanted =
      inlen <= 0 || static_cast<uint64_t>(inlen) > longest ? longest : static_cast<size_t>(inlen);
  std::vector<char> bytes(wanted);
  size_t readable = copyReadable(static_cast<uint64_t>(addr), bytes.data(), wanted);
  if (sonde_str_buffer_quoted(bytes.data(), static_cast<int64_t>(readable), inlen, limit, out,
                              capacity) < 0)
    std::snprintf(out, static_cast<size_t>(limit), "0x%" PRIx64, static_cast<uint64_t>(addr));
}

#define SONDE_USER_READ(name, type)                                                                \
  int64_t sonde_fn_user_##name##_1(sonde_context *ctx, int64_t addr, uint32_t loc) {               \
    return readValue<type>(ctx, addr, loc, false);                                                 \
  }                                                                                                \
  int64_t sonde_fn_user_##name##_error_1(sonde_context *ctx, int64_t addr, uint32_t loc) {         \
    return readValue<type>(ctx, addr, loc, true);                                                  \
  }
SONDE_USER_READ(char, signed char)
SONDE_USER_READ(short, short)
SONDE_USER_READ(ushort, unsigned short)
SONDE_USER_READ(int, int)
SONDE_USER_READ(long, long)
SONDE_USER_READ(ulong, unsigned long)
SONDE_USER_READ(int8, int8_t)
SONDE_USER_READ(uint8, uint8_t)
SONDE_USER_READ(int16, int16_t)
SONDE_USER_READ(uint16, uint16_t)
SONDE_USER_READ(int32, int32_t)
SONDE_USER_READ(uint32, uint32_t)
SONDE_USER_READ(int64, int64_t)
SONDE_USER_READ(uint64, uint64_t)
#undef SONDE_USER_READ

} // extern "C"
