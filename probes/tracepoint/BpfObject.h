// A BPF object file (ELF, as LLVM's BPF back end emits it) in the kernel: its
// maps created, its programs verified and loaded, each attached to the
// tracepoint its section names ("tracepoint/SYSTEM/EVENT"), its global data
// (.bss, .data, .rodata) written before load and read while it runs. Detached
// and unloaded when destroyed. Loading needs root (CAP_BPF and CAP_PERFMON);
// the kernel accounts BPF memory to the cgroup, so RLIMIT_MEMLOCK is left alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

struct bpf_object;

namespace sonde::probes::tracepoint {

class BpfObject {
public:
  // Opens the object in `image` (copied) without loading it; `name` names it in
  // messages. Null, with a one-line reason, for a malformed object.
  static std::unique_ptr<BpfObject> open(std::span<const uint8_t> image, const std::string &name,
                                         std::string *error);
  ~BpfObject();
  BpfObject(const BpfObject &) = delete;
  BpfObject &operator=(const BpfObject &) = delete;

  // Before load(): writes `size` bytes at `offset` of global section `section`
  // (".bss", ".data", ".rodata").
  bool setGlobal(const std::string &section, size_t offset, const void *data, size_t size,
                 std::string *error);

  // Creates the maps and loads every program. A program the verifier refuses
  // gives its name and the verifier's last lines; missing privileges give one
  // line saying what is needed.
  bool load(std::string *error);

  // A program that is not attached but put into a prog-array map, at `key`,
  // for another program to tail-call.
  struct TailCall {
    std::string program, map;
    uint32_t key;
  };
  // Puts the `tailCalls` programs into their maps, then attaches every other
  // program to the tracepoint its section names (mounting tracefs if it is
  // not). On failure nothing stays attached.
  bool attach(const std::vector<TailCall> &tailCalls, std::string *error);

  // After load(): reads `size` bytes at `offset` of a writable global section
  // (.bss, .data) as the programs leave them.
  bool readGlobal(const std::string &section, size_t offset, void *out, size_t size,
                  std::string *error);

  // Detaches every program (load() state is kept: globals stay readable).
  void detach();
  // The programs attach() attached to tracepoints (not those put into maps).
  size_t attachedCount() const;

  // The initial bytes of the object's symbol `name` (a constant the compiler
  // left for the loader), or empty when the object has no such symbol.
  std::vector<uint8_t> symbolBytes(const std::string &name) const;
  // Before load(): the shape of map `name`. False (with a reason) if absent.
  bool resizeMap(const std::string &name, uint32_t keySize, uint32_t valueSize, uint32_t maxEntries,
                 uint32_t flags, std::string *error);
  // After load(): the descriptor of map `name`, or -1.
  int mapFd(const std::string &name) const;
  // After load(): global section `section` mapped shared with the programs
  // (the kernel's map, not a copy), or null (error set).
  void *mapGlobal(const std::string &section, std::string *error);

private:
  struct Impl;
  explicit BpfObject(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace sonde::probes::tracepoint
