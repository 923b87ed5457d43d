/* The accumulator of a kernel probe's aggregate entry, one per CPU in the
 * per-CPU map `sonde_aggregates`, and `s <<< v` on it: C that the BPF runtime
 * runs (BpfValues.h), sonde reads back (KernelStats.h) and the unit tests hold
 * to the native runtime's values::statAdd. Field for field stap's stat_data
 * and __stp_stat_add, as runtime/values/StatAccumulator.h: the Welford terms
 * with stap's 32-bit `int delta`, signed overflow wrapping, _stp_div64's
 * division (by zero 0, by -1 a negation). */
#ifndef SONDE_RUNTIME_BPF_KERNEL_STAT_BLOCK_H
#define SONDE_RUNTIME_BPF_KERNEL_STAT_BLOCK_H

#include <stdint.h>

#define SONDE_KERNEL_STAT_BUCKETS 128u

typedef struct sonde_kernel_stat_block {
  uint32_t slot_lock, reserved; /* unused in the kernel: the layout of values::StatBlock */
  int64_t count, sum, min, max;
  int64_t avg_s, m2, variance_s; /* scaled by 2^shift (@variance(x, shift)) */
  int64_t buckets[SONDE_KERNEL_STAT_BUCKETS];
} sonde_kernel_stat_block;

static inline int64_t sonde_kernel_stat_div64(int64_t x, int64_t y) {
  if (y == 0)
    return 0;
  if (y == -1)
    return (int64_t)(0 - (uint64_t)x);
  return x / y;
}

/* s <<< v, the histogram apart (the BPF side masks its bucket index for the
 * verifier). The Welford terms are kept only when @variance is read. */
static inline void sonde_kernel_stat_add(sonde_kernel_stat_block *b, int64_t v, uint32_t shift,
                                         uint32_t uses_variance) {
  int64_t scaled = (int64_t)((uint64_t)v << (shift & 63));
  if (b->count == 0) {
    b->count = 1;
    b->sum = b->min = b->max = v;
    b->avg_s = scaled;
    b->m2 = 0;
    return;
  }
  b->count = (int64_t)((uint64_t)b->count + 1);
  b->sum = (int64_t)((uint64_t)b->sum + (uint64_t)v);
  if (v > b->max)
    b->max = v;
  if (v < b->min)
    b->min = v;
  if (!uses_variance)
    return;
  int32_t delta = (int32_t)(uint32_t)((uint64_t)scaled - (uint64_t)b->avg_s);
  b->avg_s = (int64_t)((uint64_t)b->avg_s + (uint64_t)sonde_kernel_stat_div64(delta, b->count));
  b->m2 = (int64_t)((uint64_t)b->m2 +
                    (uint64_t)(int64_t)delta * ((uint64_t)scaled - (uint64_t)b->avg_s));
  b->variance_s = sonde_kernel_stat_div64(b->m2, (int64_t)((uint64_t)b->count - 1));
}

#endif
