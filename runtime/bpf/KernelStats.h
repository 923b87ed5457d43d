// Aggregates between the kernel's per-CPU accumulators (KernelStatBlock.h) and
// the segment, so that @count ... @variance read in sonde give what stap gives
// for the same samples on the same CPUs:
//  - a scalar stats global keeps the kernel's CPUs as its per-CPU slots, so the
//    native merge (stap's _stp_stat_get, values::SlotMerge) runs over them;
//  - an array entry folds its CPUs into its one block as stap aggregates a
//    per-CPU map (_stp_pmap_agg: _new_map_copy_stat, CPU after CPU).
// Samples that all ran on one CPU give exactly what a userspace probe gives.
#pragma once

#include "runtime/bpf/KernelStatBlock.h"
#include "runtime/bpf/KernelStateShape.h"
#include "runtime/values/SegmentFormat.h"

#include <vector>

namespace sonde::bpf {

using KernelStatBlock = sonde_kernel_stat_block;
static_assert(sizeof(KernelStatBlock) == kStatBlockBytes);

// stap's _new_map_copy_stat(into, b, add = 1): adds b's samples to `into`,
// merging the Welford terms with the total-variance formula.
void foldStatBlock(values::StatBlock &into, const KernelStatBlock &b,
                   const values::StatShape &shape);

// A scalar stats global (its data `h`) set to the kernel's CPUs: CPU c in slot c
// (CPUs past the slots folded into slot c % slots), the overflow block empty.
void scalarFromKernel(values::StatsHeader *h, const std::vector<KernelStatBlock> &cpus);
// The kernel's CPUs for a scalar stats global: slot c on CPU c (slots past the
// CPUs folded into CPU c % CPUs), the overflow block folded into CPU 0.
std::vector<KernelStatBlock> scalarToKernel(values::StatsHeader *h, size_t cpuCount);

// An array entry's block from the kernel's CPUs.
void entryFromKernel(values::StatBlock &entry, const values::StatShape &shape,
                     const std::vector<KernelStatBlock> &cpus);
// The kernel's CPUs for an array entry: the entry on CPU 0.
std::vector<KernelStatBlock> entryToKernel(const values::StatBlock &entry,
                                           const values::StatShape &shape, size_t cpuCount);

} // namespace sonde::bpf
