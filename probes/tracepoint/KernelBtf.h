// The C arguments of the kernel's tracepoints (their TP_PROTO), from the
// running kernel's BTF, and how `$prev->pid` reads one: the raw tracepoint's
// argument, then kernel memory at offsets the BTF gives.
#pragma once

#include "ast/Ast.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

struct btf;

namespace sonde::probes::tracepoint {

struct TracepointArgument {
  std::string name;
  std::string type; // as C spells it: "struct task_struct *", "unsigned int"
};

// How one `$arg[->member|[N]]...` is read in a raw tracepoint program.
struct BtfAccess {
  enum class Result : uint8_t { Value, String, Address };
  uint32_t argIndex = 0;  // args[argIndex] of the raw tracepoint
  uint32_t argSize = 8;   // without components: the argument's own width
  bool argSigned = false; // and signedness
  // With components: address = arg; for each hop, address = *(u64 *)(address + hop);
  // then the result at address + finalOffset.
  std::vector<uint32_t> pointerHops;
  uint32_t finalOffset = 0;
  bool readsMemory = false;
  Result result = Result::Value;
  uint32_t size = 8; // Value read from memory: bytes and signedness
  bool isSigned = false;
  uint32_t length = 0; // String: the char array's length
};

class KernelBtf {
public:
  ~KernelBtf();
  KernelBtf(const KernelBtf &) = delete;
  KernelBtf &operator=(const KernelBtf &) = delete;

  // The running kernel's BTF (/sys/kernel/btf/vmlinux), loaded once; null
  // with a reason when the kernel has none.
  static const KernelBtf *running(std::string *error);
  // BTF from a file (tests).
  static std::unique_ptr<KernelBtf> fromFile(const std::string &path, std::string *error);

  // The arguments of tracepoint EVENT (from the BTF of __bpf_trace_EVENT or
  // __probestub_EVENT), without the leading `void *__data`; nullopt when the
  // BTF has none.
  std::optional<std::vector<TracepointArgument>> arguments(const std::string &event) const;

  // The byte offset of `member` in `struct NAME` (anonymous members looked
  // into), or nullopt.
  std::optional<uint32_t> memberOffset(const std::string &structName,
                                       const std::string &member) const;

  // How `sym` reads on EVENT, or nullopt with the reason in *error.
  std::optional<BtfAccess> resolve(const std::string &event, const ast::TargetSymbol &sym,
                                   std::string *error) const;

private:
  explicit KernelBtf(struct btf *btf) : btf_(btf) {}
  std::string typeName(uint32_t id) const;
  struct btf *btf_;
};

} // namespace sonde::probes::tracepoint
