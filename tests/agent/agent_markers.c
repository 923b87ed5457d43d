/* Markers the patching tests fire in-process (built -O2 with sonde/sdt.h). Each
 * marker's arguments are tied to its first one, so a hook can check the values
 * it decodes from the frame without knowing the call. */
#include "agent_markers.h"

#include <sonde/sdt.h>

/* Arguments in twelve registers: (a, a+1, ... a+11). SONDE_PROBE lets the
 * compiler choose, and clang picks memory, so this note names the registers. */
__attribute__((noinline)) long agent_fire_registers(long a) {
  register long r8 __asm__("r8") = a + 6, r9 __asm__("r9") = a + 7;
  register long r10 __asm__("r10") = a + 8, r11 __asm__("r11") = a + 9;
  register long r12 __asm__("r12") = a + 10, r13 __asm__("r13") = a + 11;
  __asm__ __volatile__(_SONDE_SDT_ASM(agent_test, regs,
                                      ".ascii \"-8@%%rax -8@%%rbx -8@%%rcx -8@%%rdx -8@%%rsi "
                                      "-8@%%rdi -8@%%r8 -8@%%r9 -8@%%r10 -8@%%r11 -8@%%r12 "
                                      "-8@%%r13\"\n")
                       :
                       : "a"(a), "b"(a + 1), "c"(a + 2), "d"(a + 3), "S"(a + 4), "D"(a + 5),
                         "r"(r8), "r"(r9), "r"(r10), "r"(r11), "r"(r12), "r"(r13));
  return a;
}

/* A leaf without a frame: its volatile local lives in the red zone below %rsp,
 * where a `call` at the site would overwrite it. (3a, a). */
__attribute__((noinline)) long agent_fire_redzone(long a) {
  volatile long slot = 3 * a;
  SONDE_PROBE(agent_test, redzone, slot, a);
  return slot;
}

/* Twelve arguments, more than the free registers: some become stack operands.
 * (a, a+7, a+14, ... a+77). */
__attribute__((noinline)) long agent_fire_many(const long *v) {
  SONDE_PROBE(agent_test, many, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10],
              v[11]);
  return v[0];
}

/* Floating-point values live in vector registers across the marker (its asm
 * clobbers nothing): the hook's own vector use must not leak into them. */
__attribute__((noinline)) double agent_fire_vector(double x) {
  double y = x * 1.5, z = x + 0.25;
  SONDE_PROBE(agent_test, vector, (long)x);
  return y * z + x;
}

/* The same with AVX state live (a 256-bit value across the marker). */
__attribute__((noinline, target("avx"))) double agent_fire_avx(double x) {
  typedef double v4 __attribute__((vector_size(32)));
  v4 a = {x, x + 1, x + 2, x + 3};
  v4 b = a * a;
  SONDE_PROBE(agent_test, avx, (long)x);
  b = b + a;
  return b[0] + b[1] + b[2] + b[3];
}

/* Every vector register holds a known value across the marker: returns how many
 * changed (0 when the entry saves and restores them all). */
__attribute__((noinline)) int agent_fire_all_xmm(long a) {
  double in[16], out[16];
  for (int i = 0; i < 16; ++i)
    in[i] = (double)a + i + 0.5;
  __asm__ __volatile__(
      "movsd 0(%[in]), %%xmm0\n movsd 8(%[in]), %%xmm1\n movsd 16(%[in]), %%xmm2\n"
      "movsd 24(%[in]), %%xmm3\n movsd 32(%[in]), %%xmm4\n movsd 40(%[in]), %%xmm5\n"
      "movsd 48(%[in]), %%xmm6\n movsd 56(%[in]), %%xmm7\n movsd 64(%[in]), %%xmm8\n"
      "movsd 72(%[in]), %%xmm9\n movsd 80(%[in]), %%xmm10\n movsd 88(%[in]), %%xmm11\n"
      "movsd 96(%[in]), %%xmm12\n movsd 104(%[in]), %%xmm13\n movsd 112(%[in]), %%xmm14\n"
      "movsd 120(%[in]), %%xmm15\n" _SONDE_SDT_ASM(
          agent_test, xmm, ".ascii \"-8@%%rdi\"\n") "movsd %%xmm0, 0(%[out])\n movsd %%xmm1, "
                                                    "8(%[out])\n movsd %%xmm2, 16(%[out])\n"
                                                    "movsd %%xmm3, 24(%[out])\n movsd %%xmm4, "
                                                    "32(%[out])\n movsd %%xmm5, 40(%[out])\n"
                                                    "movsd %%xmm6, 48(%[out])\n movsd %%xmm7, "
                                                    "56(%[out])\n movsd %%xmm8, 64(%[out])\n"
                                                    "movsd %%xmm9, 72(%[out])\n movsd %%xmm10, "
                                                    "80(%[out])\n movsd %%xmm11, 88(%[out])\n"
                                                    "movsd %%xmm12, 96(%[out])\n movsd %%xmm13, "
                                                    "104(%[out])\n movsd %%xmm14, 112(%[out])\n"
                                                    "movsd %%xmm15, 120(%[out])\n"
      :
      : [in] "r"(in), [out] "r"(out), "D"(a)
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
        "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "memory");
  int changed = 0; /* bit i: xmm i did not survive */
  for (int i = 0; i < 16; ++i)
    changed |= (in[i] != out[i]) << i;
  return changed;
}

/* The same with all 256 bits of every YMM register live (AVX state in use). */
__attribute__((noinline, target("avx"))) int agent_fire_all_ymm(long a) {
  double in[64], out[64];
  for (int i = 0; i < 64; ++i)
    in[i] = (double)a + i + 0.25;
  __asm__ __volatile__(
      "vmovupd 0(%[in]), %%ymm0\n vmovupd 32(%[in]), %%ymm1\n vmovupd 64(%[in]), %%ymm2\n"
      "vmovupd 96(%[in]), %%ymm3\n vmovupd 128(%[in]), %%ymm4\n vmovupd 160(%[in]), %%ymm5\n"
      "vmovupd 192(%[in]), %%ymm6\n vmovupd 224(%[in]), %%ymm7\n vmovupd 256(%[in]), %%ymm8\n"
      "vmovupd 288(%[in]), %%ymm9\n vmovupd 320(%[in]), %%ymm10\n vmovupd 352(%[in]), %%ymm11\n"
      "vmovupd 384(%[in]), %%ymm12\n vmovupd 416(%[in]), %%ymm13\n"
      "vmovupd 448(%[in]), %%ymm14\n vmovupd 480(%[in]), %%ymm15\n" _SONDE_SDT_ASM(
          agent_test, ymm,
          ".ascii \"-8@%%rdi\"\n") "vmovupd %%ymm0, 0(%[out])\n vmovupd %%ymm1, 32(%[out])\n "
                                   "vmovupd %%ymm2, 64(%[out])\n"
                                   "vmovupd %%ymm3, 96(%[out])\n vmovupd %%ymm4, 128(%[out])\n "
                                   "vmovupd %%ymm5, 160(%[out])\n"
                                   "vmovupd %%ymm6, 192(%[out])\n vmovupd %%ymm7, 224(%[out])\n"
                                   "vmovupd %%ymm8, 256(%[out])\n vmovupd %%ymm9, 288(%[out])\n"
                                   "vmovupd %%ymm10, 320(%[out])\n vmovupd %%ymm11, 352(%[out])\n"
                                   "vmovupd %%ymm12, 384(%[out])\n vmovupd %%ymm13, 416(%[out])\n"
                                   "vmovupd %%ymm14, 448(%[out])\n vmovupd %%ymm15, 480(%[out])\n "
                                   "vzeroupper\n"
      :
      : [in] "r"(in), [out] "r"(out), "D"(a)
      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
        "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "memory");
  int changed = 0;
  for (int i = 0; i < 64; ++i)
    changed += in[i] != out[i];
  return changed;
}

long agent_run_all(long a) {
  long v[12];
  for (int i = 0; i < 12; ++i)
    v[i] = a + 7 * i;
  return agent_fire_registers(a) + agent_fire_redzone(a) + agent_fire_many(v) +
         (long)agent_fire_vector((double)a);
}
