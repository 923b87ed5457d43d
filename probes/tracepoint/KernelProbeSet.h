// A script's kernel probes in the kernel: the BPF object the compiler left
// beside the module (kernel.bpf.o) sized for the script, loaded with the
// segment's values, attached, its ring buffer drained into sonde's output and
// its maps copied to and from the segment (runtime/session/KernelProbes.h).
#pragma once

#include "probes/tracepoint/BpfObject.h"
#include "runtime/bpf/KernelStateShape.h"
#include "runtime/bpf/KernelStats.h"
#include "runtime/session/KernelProbes.h"

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

struct ring_buffer;

namespace sonde::probes::tracepoint {

class KernelProbeSet final : public session::KernelProbes {
public:
  // The object at `path`; `ringBytes` sizes the ring buffer (a power of two,
  // at least a page). Null with a reason if it cannot be read or opened.
  static std::unique_ptr<KernelProbeSet> open(const std::string &path, uint64_t ringBytes,
                                              std::string *error);
  ~KernelProbeSet() override;

  bool start(session::Runtime &rt, std::string *error) override;
  void importState() override;
  void exportChanges() override;
  void stop() override;
  uint64_t lostRecords() const override;
  std::string attachment() const override;

private:
  // Raw BPF key -> value bytes (stats: every CPU's block, as the per-CPU map holds them).
  using Entries = std::map<std::string, std::string>;

  KernelProbeSet(std::unique_ptr<BpfObject> object, uint64_t ringBytes);
  bool size(std::string *error);
  std::vector<BpfObject::TailCall> syscallTailCalls() const;
  void nameRefusedProgram(std::string *error) const;
  static std::string recordString(const char *data, size_t size, size_t offset);
  void drain();
  static int onRecord(void *self, void *data, size_t size);
  void record(const char *data, size_t size);
  Entries readMap(int fd, bool perCpu) const;
  Entries nativeEntries(uint32_t global) const;
  std::vector<bpf::KernelStatBlock> statBlocks(const std::string &value) const;
  std::string statBytes(const std::vector<bpf::KernelStatBlock> &cpus) const;
  void writeNative(uint32_t global, const Entries &entries);
  void writeKernel(uint32_t global, const Entries &before, const Entries &after);
  char *segmentBase() const;

  std::unique_ptr<BpfObject> object_;
  uint64_t ringBytes_;
  session::Runtime *rt_ = nullptr;
  bpf::KernelStateShape shape_;
  std::vector<uint32_t> globals_; // layout indexes kernel probes use
  uint64_t scratchBytes_ = 0;
  size_t dispatched_[2] = {0, 0}; // syscalls:* programs run from sys_enter, sys_exit
  char *bss_ = nullptr;           // the programs' .bss: sonde_bpf_control, then scalars
  int cpus_ = 1;
  std::map<uint32_t, Entries> snapshot_; // per global, as last imported or exported
  ring_buffer *ring_ = nullptr;
  std::thread drainer_;
  std::atomic<bool> stopping_{false};
};

} // namespace sonde::probes::tracepoint
