/* The traced process of the target/ conformance goldens (tests/conformance/target):
 * markers whose arguments point at static data with known bytes, an unreadable
 * address and a known call chain, so that scripts reading the target's memory,
 * stack and process context have exact expected output.
 *
 * Usage: marker_workload MODE [COUNT]
 *   memory    fires `memory` once: $arg1..$arg8 point at the int8 .. uint64
 *             values below (signed, then unsigned, per width), $arg9 at the
 *             char 'A', $arg10 is 8 (unreadable)
 *   strings   fires `strings` once: $arg1 "hello, marker", $arg2 a string with
 *             a tab, quotes, a backslash, \001, \177 and U+00E9 in UTF-8,
 *             $arg3 an 11-byte buffer with an embedded NUL and non-printable
 *             bytes, $arg4 its size, $arg5 a 43-byte text, $arg6 8 (unreadable)
 *   chain N   N times main -> outer -> middle -> inner, where `deep` fires
 *   context   fires `context` once: $arg1 points at the value of PATH ("" if
 *             unset), as this process sees it, after setting
 *             SONDE_WORKLOAD_SET_LATE (not in its initial environment)
 * Built -O2 -g -fno-omit-frame-pointer as a PIE (tests/e2e/CMakeLists.txt). */
#include <sonde/sdt.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const int8_t s8 = -100;
static const uint8_t u8 = 200;
static const int16_t s16 = -12345;
static const uint16_t u16 = 65000;
static const int32_t s32 = -1234567890;
static const uint32_t u32 = 4000000000u;
static const int64_t s64 = -1234567890123456789ll;
static const uint64_t u64 = 0xfedcba9876543210ull;
/* Positive: user_char reads a C char, which stap's kernel runtime reads unsigned
 * since Linux 6.2 and the target signed. */
static const char letter = 'A';

static const char text[] = "hello, marker";
static const char escapes[] = "tab\there \"quoted\" back\\slash \001\177 caf\xc3\xa9";
static const char buffer[11] = {'a', 'b', '\0', 'c', '\n', '\001', '\177', '\377', '"', '\\', 'z'};
static const char long_text[] = "The quick brown fox jumps over the lazy dog";

/* The lowest page is never mapped: every read there faults. */
#define UNREADABLE ((uintptr_t)8)

/* Opaque to the optimizer: no call below becomes a jump or is folded away. */
static volatile int sink;

__attribute__((noinline)) static void fire_memory(void) {
  SONDE_PROBE(workload, memory, &s8, &u8, &s16, &u16, &s32, &u32, &s64, &u64, &letter, UNREADABLE);
}

__attribute__((noinline)) static void fire_strings(void) {
  SONDE_PROBE(workload, strings, text, escapes, buffer, sizeof buffer, long_text, UNREADABLE);
}

__attribute__((noinline)) static void fire_context(void) {
  const char *path = getenv("PATH");
  /* Set after start: env_var() reads the environment the process started with. */
  setenv("SONDE_WORKLOAD_SET_LATE", "late", 1);
  SONDE_PROBE(workload, context, path ? path : "");
}

/* The call chain of the stack goldens. External, so that no optimization renames
 * them (.constprop, .isra); without arguments, so that each frame-pointer
 * prologue is all that precedes the marker and the calls, whose offsets
 * print_ubacktrace_brief.probe prints. */
__attribute__((noinline)) void inner(void) { SONDE_PROBE(workload, deep); }

__attribute__((noinline)) void middle(void) {
  inner();
  sink++;
}

__attribute__((noinline)) void outer(void) {
  middle();
  sink++;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "memory") == 0) {
    fire_memory();
  } else if (strcmp(mode, "strings") == 0) {
    fire_strings();
  } else if (strcmp(mode, "context") == 0) {
    fire_context();
  } else if (strcmp(mode, "chain") == 0) {
    long count = argc > 2 ? strtol(argv[2], NULL, 10) : 1;
    for (long i = 0; i < count; ++i)
      outer();
  } else {
    fprintf(stderr, "usage: %s memory|strings|context|chain COUNT\n", argv[0]);
    return 2;
  }
  return 0;
}
