/* End-to-end target for marker arguments: every integer width and signedness,
 * char, a bool, enums, pointers, strings, constants, 0 and 12 arguments, a
 * leaf function whose operands sit in the red zone, one name at two sites and a
 * marker in a shared library. Usage: e2e_args RECORD_FILE ITERATIONS; each
 * firing is recorded (e2e_record.h) right after the marker. */
#include "e2e_lib.h"
#include "e2e_record.h"

#include <sonde/sdt.h>
#include <stdint.h>
#include <string.h>

enum e2e_color { E2E_RED = 1, E2E_GREEN = 2, E2E_BLUE = 0x7fffffff };
enum e2e_delta { E2E_DOWN = -1, E2E_UP = 1 };

/* Iteration 0 passes each type's minimum, 1 its maximum, later ones mixed
 * values, all computed at run time so they reach the marker in registers or
 * memory, not as constants. */
#define E2E_PICK(i, min, max, mixed) ((i) == 0 ? (min) : (i) == 1 ? (max) : (mixed))

__attribute__((noinline)) static void fire_widths(long i) {
  int8_t s8 = (int8_t)E2E_PICK(i, INT8_MIN, INT8_MAX, i * 37 - 100);
  uint8_t u8 = (uint8_t)E2E_PICK(i, 0, UINT8_MAX, i * 91);
  int16_t s16 = (int16_t)E2E_PICK(i, INT16_MIN, INT16_MAX, -i * 1234);
  uint16_t u16 = (uint16_t)E2E_PICK(i, 0, UINT16_MAX, i * 4321);
  int32_t s32 = (int32_t)E2E_PICK(i, INT32_MIN, INT32_MAX, -i * 123456789);
  uint32_t u32 = (uint32_t)E2E_PICK(i, 0, UINT32_MAX, i * 987654321u);
  int64_t s64 = (int64_t)E2E_PICK(i, INT64_MIN, INT64_MAX, -i * 1234567890123ll);
  uint64_t u64 = (uint64_t)E2E_PICK(i, 0, UINT64_MAX, i * 0x9e3779b97f4a7c15ull);
  char c = (char)E2E_PICK(i, -128, 'z', 0xe0 + i);
  _Bool flag = (i & 1) != 0;
  enum e2e_color color = E2E_PICK(i, E2E_RED, E2E_BLUE, E2E_GREEN);
  void *pointer = E2E_PICK(i, NULL, (void *)&fire_widths, (void *)&c);
  SONDE_PROBE(e2e, widths, s8, u8, s16, u16, s32, u32, s64, u64, c, flag, color, pointer);
  e2e_record("e2e", "widths", NULL, 12, (long long)s8, (long long)u8, (long long)s16,
             (long long)u16, (long long)s32, (long long)u32, (long long)s64, (long long)u64,
             (long long)c, (long long)flag, (long long)color, (long long)(uintptr_t)pointer);
}

/* A leaf: clang keeps the operands below %rsp (the red zone), which a patched
 * call must not clobber. */
__attribute__((noinline)) static void leaf(int8_t a, uint16_t b, int64_t c, enum e2e_delta d) {
  SONDE_PROBE(e2e, leaf, a, b, c, d);
}

__attribute__((noinline)) static void fire_leaf(long i) {
  int8_t a = (int8_t)(-i - 1);
  uint16_t b = (uint16_t)(60000 + i);
  int64_t c = -(int64_t)i << 40;
  enum e2e_delta d = (i & 1) ? E2E_UP : E2E_DOWN;
  leaf(a, b, c, d);
  e2e_record("e2e", "leaf", NULL, 4, (long long)a, (long long)b, (long long)c, (long long)d);
}

__attribute__((noinline)) static void fire_strings(long i) {
  static const char *const samples[] = {
      "", "hello", "with spaces and \"quotes\"", "caf\xc3\xa9 na\xc3\xafve",
      ("0123456789012345678901234567890123456789012345678901234567"
       "89012345678901234567890123456789")};
  char buffer[128];
  strcpy(buffer, samples[i % (long)(sizeof samples / sizeof samples[0])]);
  size_t length = strlen(buffer);
  SONDE_PROBE(e2e, strings, buffer, length);
  e2e_record("e2e", "strings", buffer, 2, (long long)(uintptr_t)buffer, (long long)length);
}

__attribute__((noinline)) static void fire_constants(void) {
  SONDE_PROBE(e2e, constants, 42, -7, (int64_t)-1, (uint8_t)200);
  e2e_record("e2e", "constants", NULL, 4, 42ll, -7ll, -1ll, 200ll);
}

__attribute__((noinline)) static void fire_noargs(void) {
  SONDE_PROBE(e2e, noargs);
  e2e_record("e2e", "noargs", NULL, 0);
}

/* `twice` has two sites; the first argument says which. */
__attribute__((noinline)) static void fire_twice_a(long i) {
  SONDE_PROBE(e2e, twice, 1, i);
  e2e_record("e2e", "twice", NULL, 2, 1ll, (long long)i);
}
__attribute__((noinline)) static void fire_twice_b(long i) {
  SONDE_PROBE(e2e, twice, 2, i);
  e2e_record("e2e", "twice", NULL, 2, 2ll, (long long)i);
}

/* `two` and `three` differ in whether $arg3 exists. */
__attribute__((noinline)) static void fire_arity(long i) {
  SONDE_PROBE(e2e, two, i, i + 1);
  e2e_record("e2e", "two", NULL, 2, (long long)i, (long long)(i + 1));
  SONDE_PROBE(e2e, three, i, i + 1, i + 2);
  e2e_record("e2e", "three", NULL, 3, (long long)i, (long long)(i + 1), (long long)(i + 2));
}

__attribute__((noinline)) static void fire_library(long i) {
  char text[32];
  snprintf(text, sizeof text, "lib-%ld", i);
  int64_t n = (int64_t)i * 1000003 - 7;
  e2e_lib_fire(n, text);
  e2e_record("e2e_lib", "lib", text, 3, (long long)n, (long long)-n, (long long)(uintptr_t)text);
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s RECORD_FILE ITERATIONS\n", argv[0]);
    return 2;
  }
  e2e_open(argv[1]);
  long iterations = strtol(argv[2], NULL, 10);
  for (long i = 0; i < iterations; ++i) {
    fire_widths(i);
    fire_leaf(i);
    fire_strings(i);
    fire_constants();
    fire_noargs();
    fire_twice_a(i);
    fire_twice_b(i);
    fire_arity(i);
    fire_library(i);
  }
  return fclose(e2e_out) == 0 ? 0 : 1;
}
