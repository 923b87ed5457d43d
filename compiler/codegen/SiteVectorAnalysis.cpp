#include "codegen/SiteVectorAnalysis.h"

#include "codegen/ElfMachineCode.h"

#include <llvm/MC/MCInst.h>
#include <llvm/MC/MCInstrAnalysis.h>
#include <llvm/MC/MCInstrInfo.h>
#include <llvm/MC/MCRegisterInfo.h>

#include <algorithm>
#include <map>
#include <optional>
#include <vector>

namespace sonde::codegen {

namespace {

// The instruction's first opcode byte after legacy prefixes and REX.
bool usesVectorExtension(const uint8_t *bytes, uint64_t size) {
  uint64_t i = 0;
  auto legacyPrefix = [](uint8_t b) {
    return b == 0x66 || b == 0x67 || b == 0xf2 || b == 0xf3 || b == 0xf0 || b == 0x2e ||
           b == 0x36 || b == 0x3e || b == 0x26 || b == 0x64 || b == 0x65;
  };
  while (i < size && legacyPrefix(bytes[i]))
    ++i;
  if (i < size && (bytes[i] & 0xf0) == 0x40)
    ++i;
  if (i >= size)
    return false;
  uint8_t op = bytes[i];
  // In 64-bit mode C4/C5 are always VEX and 62 always EVEX; 8F is XOP unless
  // its ModRM names POP (reg field 0).
  return op == 0xc4 || op == 0xc5 || op == 0x62 ||
         (op == 0x8f && i + 1 < size && (bytes[i + 1] & 0x38) != 0);
}

bool isVectorRegisterName(llvm::StringRef name) {
  return name.starts_with("XMM") || name.starts_with("YMM") || name.starts_with("ZMM") ||
         (name.size() == 2 && name[0] == 'K' && name[1] >= '0' && name[1] <= '7');
}

// Whether `inst` reads or writes a vector register (any width, or a mask
// register), explicitly or implicitly, or saves or restores the vector state.
bool touchesVectorRegisters(const X86Decoder &d, const llvm::MCInst &inst) {
  for (const llvm::MCOperand &op : inst)
    if (op.isReg() && op.getReg() && isVectorRegisterName(d.registers->getName(op.getReg())))
      return true;
  const llvm::MCInstrDesc &desc = d.instrInfo->get(inst.getOpcode());
  for (llvm::MCPhysReg r : desc.implicit_uses())
    if (isVectorRegisterName(d.registers->getName(r)))
      return true;
  for (llvm::MCPhysReg r : desc.implicit_defs())
    if (isVectorRegisterName(d.registers->getName(r)))
      return true;
  llvm::StringRef name = d.instrInfo->getName(inst.getOpcode());
  return name.starts_with("XSAVE") || name.starts_with("XRSTOR") || name.starts_with("FXSAVE") ||
         name.starts_with("FXRSTOR");
}

// What decoding one range found.
struct RangeFacts {
  bool decoded = true;            // every byte decoded
  bool vectorCode = false;        // a VEX/EVEX/XOP instruction
  bool vectorRegisters = false;   // an instruction using a vector register
  bool opaqueCall = false;        // an indirect call or a call through the PLT
  std::vector<uint64_t> calls;    // direct call targets outside the PLT
  std::vector<uint64_t> jumpsOut; // direct jump targets outside the range
};

constexpr int kMaxRegionRanges = 8;
constexpr int kMaxCallDepth = 3;

} // namespace

struct SiteVectorAnalysis::Impl {
  ElfMachineCode code;
  std::map<uint64_t, bool> opaqueMemo; // by function start

  explicit Impl(const std::string &path) : code(path) {}

  // The function holding `address`: its symbol, else its .eh_frame FDE.
  std::optional<Range> functionAt(uint64_t address) const {
    if (std::optional<Range> r = code.symbolFunctionAt(address))
      return r;
    if (std::optional<FdeRange> f = code.fdeAt(address))
      return f->range;
    return std::nullopt;
  }

  RangeFacts factsOf(Range r) const {
    RangeFacts f;
    const llvm::MCInstrAnalysis &mia = *code.decoder().analysis;
    f.decoded = code.decode(
        r, [&](uint64_t a, const llvm::MCInst &inst, const uint8_t *bytes, uint64_t size) {
          if (usesVectorExtension(bytes, size))
            f.vectorCode = true;
          if (!f.vectorRegisters && touchesVectorRegisters(code.decoder(), inst))
            f.vectorRegisters = true;
          uint64_t target = 0;
          bool direct = mia.evaluateBranch(inst, a, size, target);
          if (mia.isCall(inst)) {
            const CodeSection *s = direct ? code.sectionOf(target) : nullptr;
            if (!direct || (s && s->plt))
              f.opaqueCall = true;
            else
              f.calls.push_back(target);
          } else if (direct && mia.isBranch(inst) && (target < r.start || target >= r.end)) {
            f.jumpsOut.push_back(target);
          }
        });
    return f;
  }

  // Whether callers must assume a call to the function at `f` clobbers every
  // call-clobbered register: it makes an opaque call, directly or through
  // direct calls (a few levels deep).
  bool opaque(Range f, int depth) {
    if (auto it = opaqueMemo.find(f.start); it != opaqueMemo.end())
      return it->second;
    opaqueMemo[f.start] = false; // recursion: assume not while looking
    RangeFacts facts = factsOf(f);
    bool result = facts.decoded && facts.opaqueCall;
    for (size_t i = 0; !result && depth < kMaxCallDepth && i < facts.calls.size(); ++i)
      if (std::optional<Range> callee = functionAt(facts.calls[i]))
        result = opaque(*callee, depth + 1);
    opaqueMemo[f.start] = result;
    return result;
  }

  SiteVectorSave saveFor(uint64_t pc) {
    if (!code.valid())
      return SiteVectorSave::Full;
    std::optional<Range> home = functionAt(pc);
    if (!home)
      return SiteVectorSave::Full;
    // The function and the code it jumps into (cold parts, tail callees).
    std::vector<Range> region{*home};
    std::vector<uint64_t> calls;
    bool opaqueCall = false, vectorRegisters = false;
    for (size_t i = 0; i < region.size(); ++i) {
      RangeFacts f = factsOf(region[i]);
      if (!f.decoded || f.vectorCode)
        return SiteVectorSave::Full;
      opaqueCall = opaqueCall || f.opaqueCall;
      vectorRegisters = vectorRegisters || f.vectorRegisters;
      calls.insert(calls.end(), f.calls.begin(), f.calls.end());
      for (uint64_t t : f.jumpsOut) {
        if (std::any_of(region.begin(), region.end(),
                        [&](const Range &r) { return t >= r.start && t < r.end; }))
          continue;
        std::optional<Range> next = functionAt(t);
        if (!next || region.size() == kMaxRegionRanges)
          return SiteVectorSave::Full;
        region.push_back(*next);
      }
    }
    // Callers keep nothing in vector registers across a call to it (see the header).
    bool callersFollowTheAbi =
        opaqueCall || std::any_of(calls.begin(), calls.end(), [&](uint64_t t) {
          std::optional<Range> callee = functionAt(t);
          return callee && opaque(*callee, 1);
        });
    if (!callersFollowTheAbi) {
      auto it = code.branchTargets().find(home->start);
      callersFollowTheAbi = it == code.branchTargets().end() ||
                            (it->second.lowest >= home->start && it->second.highest < home->end);
    }
    if (!callersFollowTheAbi)
      return SiteVectorSave::Full;
    return vectorRegisters ? SiteVectorSave::Sse : SiteVectorSave::Args;
  }
};

SiteVectorAnalysis::SiteVectorAnalysis(const std::string &path)
    : impl_(std::make_unique<Impl>(path)) {}

SiteVectorAnalysis::~SiteVectorAnalysis() = default;

SiteVectorSave SiteVectorAnalysis::saveFor(uint64_t pc) { return impl_->saveFor(pc); }

} // namespace sonde::codegen
