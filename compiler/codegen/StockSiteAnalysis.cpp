#include "codegen/StockSiteAnalysis.h"

#include "codegen/ElfMachineCode.h"
#include "codegen/JumpTableReader.h"

#include <llvm/MC/MCInst.h>
#include <llvm/MC/MCInstrAnalysis.h>

#include <algorithm>
#include <cstring>

namespace sonde::codegen {

const char *refusalName(StockSiteRefusal refusal) {
  switch (refusal) {
  case StockSiteRefusal::NoFunction: return "no-function";
  case StockSiteRefusal::FunctionUndecodable: return "function-undecodable";
  case StockSiteRefusal::NotAnInstructionBoundary: return "not-an-instruction-boundary";
  case StockSiteRefusal::NotANop: return "not-a-nop";
  case StockSiteRefusal::BranchIntoRegion: return "branch-into-region";
  case StockSiteRefusal::IndirectJump: return "indirect-jump-in-function";
  case StockSiteRefusal::LandingPadInRegion: return "landing-pad-in-region";
  case StockSiteRefusal::UnreadableExceptionTable: return "unreadable-exception-table";
  case StockSiteRefusal::SymbolInRegion: return "symbol-in-region";
  case StockSiteRefusal::RegionPastFunctionEnd: return "region-past-function-end";
  case StockSiteRefusal::CallInRegion: return "call-in-region";
  case StockSiteRefusal::SystemInstructionInRegion: return "system-instruction-in-region";
  case StockSiteRefusal::EndbrInRegion: return "endbr-in-region";
  case StockSiteRefusal::ShortBranchOnlyInRegion: return "short-branch-only-in-region";
  case StockSiteRefusal::UnknownInstructionInRegion: return "unknown-instruction-in-region";
  }
  return "unknown";
}

namespace {

constexpr uint32_t kJumpSize = 5; // jmp rel32

using Decoded = DecodedInstruction;

// Reads DWARF-encoded values (DW_EH_PE_*) from the object's allocated bytes.
class EncodedReader {
public:
  EncodedReader(const ElfMachineCode &code, uint64_t address) : code_(code), at_(address) {}
  uint64_t at() const { return at_; }

  bool byte(uint8_t &out) { return fixed(1, out); }

  bool uleb(uint64_t &out) {
    out = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
      uint8_t b;
      if (!byte(b))
        return false;
      out |= uint64_t(b & 0x7f) << shift;
      if (!(b & 0x80))
        return true;
    }
    return false;
  }

  bool sleb(int64_t &out) {
    uint64_t v = 0;
    unsigned shift = 0;
    uint8_t b = 0;
    do {
      if (shift >= 64 || !byte(b))
        return false;
      v |= uint64_t(b & 0x7f) << shift;
      shift += 7;
    } while (b & 0x80);
    if (shift < 64 && (b & 0x40))
      v |= ~uint64_t(0) << shift;
    out = static_cast<int64_t>(v);
    return true;
  }

  // A value of `encoding`; only absolute and pc-relative applications.
  bool encoded(uint8_t encoding, uint64_t &out) {
    uint64_t fieldAddress = at_;
    uint64_t v = 0;
    switch (encoding & 0x0f) {
    case 0x00: {
      uint64_t x;
      if (!fixed(8, x))
        return false;
      v = x;
      break;
    }
    case 0x01:
      if (!uleb(v))
        return false;
      break;
    case 0x02: {
      uint16_t x;
      if (!fixed(2, x))
        return false;
      v = x;
      break;
    }
    case 0x03: {
      uint32_t x;
      if (!fixed(4, x))
        return false;
      v = x;
      break;
    }
    case 0x04: {
      uint64_t x;
      if (!fixed(8, x))
        return false;
      v = x;
      break;
    }
    case 0x09: {
      int64_t x;
      if (!sleb(x))
        return false;
      v = static_cast<uint64_t>(x);
      break;
    }
    case 0x0a: {
      int16_t x;
      if (!fixed(2, x))
        return false;
      v = static_cast<uint64_t>(int64_t(x));
      break;
    }
    case 0x0b: {
      int32_t x;
      if (!fixed(4, x))
        return false;
      v = static_cast<uint64_t>(int64_t(x));
      break;
    }
    case 0x0c: {
      int64_t x;
      if (!fixed(8, x))
        return false;
      v = static_cast<uint64_t>(x);
      break;
    }
    default: return false;
    }
    switch (encoding & 0x70) {
    case 0x00: break;
    case 0x10: v += fieldAddress; break;
    default: return false; // textrel, datarel, funcrel, aligned: not produced by GCC or clang
    }
    if (encoding & 0x80)
      return false; // indirect: not for call-site tables
    out = v;
    return true;
  }

private:
  template <class T> bool fixed(size_t n, T &out) {
    const uint8_t *p = code_.allocatedBytes(at_, n);
    if (!p)
      return false;
    std::memcpy(&out, p, n);
    at_ += n;
    return true;
  }

  const ElfMachineCode &code_;
  uint64_t at_;
};

// The landing pads of the LSDA at `lsda` for a function starting at
// `functionStart`, or false if the table cannot be read.
bool readLandingPads(const ElfMachineCode &code, uint64_t lsda, uint64_t functionStart,
                     std::vector<uint64_t> &pads) {
  EncodedReader r(code, lsda);
  uint8_t lpStartEncoding, ttypeEncoding, callSiteEncoding;
  uint64_t lpStart = functionStart, ignored, tableLength;
  if (!r.byte(lpStartEncoding))
    return false;
  if (lpStartEncoding != 0xff && !r.encoded(lpStartEncoding, lpStart))
    return false;
  if (!r.byte(ttypeEncoding))
    return false;
  if (ttypeEncoding != 0xff && !r.uleb(ignored))
    return false;
  if (!r.byte(callSiteEncoding) || !r.uleb(tableLength))
    return false;
  uint64_t end = r.at() + tableLength;
  while (r.at() < end) {
    uint64_t start, length, pad, action;
    if (!r.encoded(callSiteEncoding, start) || !r.encoded(callSiteEncoding, length) ||
        !r.encoded(callSiteEncoding, pad) || !r.uleb(action))
      return false;
    if (pad != 0)
      pads.push_back(lpStart + pad);
  }
  return r.at() == end;
}

// The offset of the disp32 field of a rip-relative instruction whose decoded
// displacement is `disp`: the position where changing the 4 bytes changes the
// decoded displacement and nothing else.
std::optional<uint32_t> dispFieldOffset(const X86Decoder &d, const Decoded &in,
                                        const uint8_t *bytes, unsigned dispOperand) {
  int32_t disp = static_cast<int32_t>(in.inst.getOperand(dispOperand).getImm());
  for (uint64_t p = in.size - 4; p >= 1 && p < in.size; --p) {
    int32_t here;
    std::memcpy(&here, bytes + p, 4);
    if (here != disp)
      continue;
    std::vector<uint8_t> changed(bytes, bytes + in.size);
    int32_t other = disp ^ 0x01020304;
    std::memcpy(changed.data() + p, &other, 4);
    llvm::MCInst again;
    uint64_t size = 0;
    if (d.disassembler->getInstruction(again, size, changed, in.address, llvm::nulls()) !=
            llvm::MCDisassembler::Success ||
        size != in.size || again.getOpcode() != in.inst.getOpcode() ||
        again.getNumOperands() != in.inst.getNumOperands())
      continue;
    bool onlyDisp = true;
    for (unsigned i = 0; i < again.getNumOperands(); ++i) {
      const llvm::MCOperand &a = again.getOperand(i), &b = in.inst.getOperand(i);
      if (i == dispOperand)
        onlyDisp = onlyDisp && a.isImm() && a.getImm() == other;
      else if (a.isImm() != b.isImm() || a.isReg() != b.isReg() ||
               (a.isImm() && a.getImm() != b.getImm()) || (a.isReg() && a.getReg() != b.getReg()))
        onlyDisp = false;
    }
    if (onlyDisp)
      return static_cast<uint32_t>(p);
  }
  return std::nullopt;
}

// The index of the displacement operand of a rip-relative memory operand.
std::optional<unsigned> ripDisplacementOperand(const X86Decoder &d, const llvm::MCInst &inst) {
  // X86 memory operands are base, scale, index, displacement, segment.
  for (unsigned i = 0; i + 3 < inst.getNumOperands(); ++i) {
    const llvm::MCOperand &op = inst.getOperand(i);
    if (op.isReg() && op.getReg() && d.registers->getName(op.getReg()) == llvm::StringRef("RIP") &&
        inst.getOperand(i + 3).isImm())
      return i + 3;
  }
  return std::nullopt;
}

bool usesEip(const X86Decoder &d, const llvm::MCInst &inst) {
  for (const llvm::MCOperand &op : inst)
    if (op.isReg() && op.getReg() && d.registers->getName(op.getReg()) == llvm::StringRef("EIP"))
      return true;
  return false;
}

bool startsWithAny(llvm::StringRef name, std::initializer_list<const char *> prefixes) {
  return std::any_of(prefixes.begin(), prefixes.end(),
                     [&](const char *p) { return name.starts_with(p); });
}

} // namespace

struct StockSiteAnalysis::Impl {
  ElfMachineCode code;
  explicit Impl(const std::string &path) : code(path) {}

  static StockSiteDecision refuse(StockSiteDecision d, StockSiteRefusal r, std::string why) {
    d.refusal = r;
    d.reason = std::move(why);
    return d;
  }

  StockSiteDecision analyse(uint64_t pc) {
    StockSiteDecision d;
    if (!code.valid())
      return refuse(d, StockSiteRefusal::NoFunction, "the object cannot be read");
    const X86Decoder &x = code.decoder();
    const llvm::MCInstrAnalysis &mia = *x.analysis;

    std::optional<FdeRange> fde = code.fdeAt(pc);
    std::optional<Range> function =
        fde ? std::optional<Range>(fde->range) : code.symbolFunctionAt(pc);
    if (!function)
      return refuse(d, StockSiteRefusal::NoFunction,
                    "no .eh_frame FDE or function symbol covers " + hex(pc));
    d.functionStart = function->start;
    d.functionEnd = function->end;
    const CodeSection *section = code.sectionOf(pc);
    if (!section || section->bytes[pc - section->address] != 0x90)
      return refuse(d, StockSiteRefusal::NotANop, "the byte at " + hex(pc) + " is not a NOP");

    // The whole function, linearly.
    std::vector<Decoded> insts;
    bool whole = code.decode(
        *function, [&](uint64_t a, const llvm::MCInst &inst, const uint8_t *, uint64_t size) {
          insts.push_back({a, size, inst});
        });
    uint64_t decodedEnd =
        insts.empty() ? function->start : insts.back().address + insts.back().size;
    auto at =
        std::find_if(insts.begin(), insts.end(), [&](const Decoded &i) { return i.address >= pc; });
    if (!whole && decodedEnd <= pc)
      return refuse(d, StockSiteRefusal::FunctionUndecodable,
                    "bytes at " + hex(decodedEnd) + " of the function at " + hex(function->start) +
                        " do not decode");
    if (at == insts.end() || at->address != pc)
      return refuse(d, StockSiteRefusal::NotAnInstructionBoundary,
                    hex(pc) + " is not an instruction boundary of the function decoded from " +
                        hex(function->start));

    // The region: the NOP and whole instructions until 5 bytes are covered. A
    // jmp or ret before that does not end it: the bytes after it are displaced
    // too (the stub never runs them) and checked like the rest.
    StockSitePlan plan;
    plan.pc = pc;
    for (auto it = at; plan.length < kJumpSize; ++it) {
      if (it == insts.end()) {
        if (!whole && decodedEnd < function->end)
          return refuse(d, StockSiteRefusal::UnknownInstructionInRegion,
                        "the bytes at " + hex(decodedEnd) + " do not decode");
        if (!appendPadding(plan, *function, d))
          return d;
        break;
      }
      std::optional<DisplacedInstruction> moved = classify(*it, d);
      if (!moved)
        return d;
      plan.instructions.push_back(*moved);
      plan.length += static_cast<uint32_t>(it->size);
      plan.endsInTransfer = plan.endsInTransfer || moved->kind == DisplacedKind::Return ||
                            (moved->kind == DisplacedKind::Branch && !moved->conditional);
    }
    if (!whole)
      return refuse(d, StockSiteRefusal::FunctionUndecodable,
                    "bytes at " + hex(decodedEnd) + " of the function at " + hex(function->start) +
                        " do not decode");
    uint64_t end = pc + plan.length;
    auto inside = [&](uint64_t a) { return a > pc && a < end; };

    // Branches into the region: the function's own, then any of the object's.
    for (const Decoded &i : insts) {
      uint64_t target = 0;
      if ((mia.isBranch(i.inst) || mia.isCall(i.inst)) &&
          mia.evaluateBranch(i.inst, i.address, i.size, target) && inside(target))
        return refuse(d, StockSiteRefusal::BranchIntoRegion,
                      "`" + x.text(i.inst, i.address, i.size) + "` at " + hex(i.address) +
                          " targets " + hex(target));
    }
    const auto &targets = code.branchTargets();
    for (uint64_t a = pc + 1; a < end; ++a)
      if (auto t = targets.find(a); t != targets.end())
        return refuse(d, StockSiteRefusal::BranchIntoRegion,
                      "a branch at " + hex(t->second.lowest) + " targets " + hex(a));
    std::vector<JumpTable> tables;
    for (size_t k = 0; k < insts.size(); ++k) {
      const Decoded &i = insts[k];
      if (!mia.isIndirectBranch(i.inst) || mia.isCall(i.inst))
        continue;
      std::string why;
      std::optional<JumpTable> table = readJumpTable(code, insts, k, why);
      if (!table)
        return refuse(d, StockSiteRefusal::IndirectJump,
                      "indirect jump in function: `" + x.text(i.inst, i.address, i.size) + "` at " +
                          hex(i.address) + ", its table not read: " + why);
      for (uint64_t target : table->targets)
        if (inside(target))
          return refuse(d, StockSiteRefusal::BranchIntoRegion,
                        "a jump table of `" + x.text(i.inst, i.address, i.size) + "` at " +
                            hex(i.address) + " targets " + hex(target));
      tables.push_back(std::move(*table));
    }
    std::vector<uint64_t> pads;
    if (fde && fde->lsda) {
      if (!readLandingPads(code, *fde->lsda, function->start, pads))
        return refuse(d, StockSiteRefusal::UnreadableExceptionTable,
                      "the LSDA at " + hex(*fde->lsda) + " cannot be read");
      for (uint64_t pad : pads)
        if (inside(pad))
          return refuse(d, StockSiteRefusal::LandingPadInRegion,
                        "an exception landing pad at " + hex(pad));
    }
    if (std::optional<std::string> entered = guardEntered(*function, tables, pads))
      return refuse(d, StockSiteRefusal::IndirectJump, *entered);
    uint64_t symbol = 0;
    if (code.symbolInside(pc, end, symbol))
      return refuse(d, StockSiteRefusal::SymbolInRegion, "a symbol at " + hex(symbol));
    if (pc - section->address + plan.length > section->size)
      return refuse(d, StockSiteRefusal::RegionPastFunctionEnd,
                    "the region runs past the end of its section");
    plan.bytes.assign(section->bytes + (pc - section->address),
                      section->bytes + (pc - section->address) + plan.length);
    d.plan = std::move(plan);
    return d;
  }

  // The region past the function's end, to 5 bytes: only inter-function
  // padding (int3, NOP encodings) after a jmp or ret of the region, so that
  // nothing ever runs it; no FDE or function symbol may cover it. Symbols and
  // branch targets in it are refused with the rest of the region. False with
  // `d` refused otherwise.
  bool appendPadding(StockSitePlan &plan, Range function, StockSiteDecision &d) {
    std::string ends = "the function ends at " + hex(function.end) + ", " +
                       std::to_string(function.end - plan.pc) + " bytes after the site";
    if (!plan.endsInTransfer) {
      d = refuse(d, StockSiteRefusal::RegionPastFunctionEnd,
                 ends + ", and the region does not leave it by a jmp or ret before");
      return false;
    }
    const X86Decoder &x = code.decoder();
    const CodeSection *s = code.sectionOf(plan.pc);
    for (uint64_t a = function.end; plan.length < kJumpSize;) {
      llvm::MCInst inst;
      uint64_t size = 0;
      bool decoded =
          a - s->address < s->size &&
          x.disassembler->getInstruction(
              inst, size,
              llvm::ArrayRef<uint8_t>(s->bytes + (a - s->address), s->size - (a - s->address)), a,
              llvm::nulls()) == llvm::MCDisassembler::Success &&
          size > 0;
      llvm::StringRef name = decoded ? x.opcodeName(inst) : "";
      if (!decoded || (name != "INT3" && name != "NOOP" && name != "NOOPL" && name != "NOOPW" &&
                       name != "NOOPQ")) {
        d = refuse(d, StockSiteRefusal::RegionPastFunctionEnd,
                   ends +
                       (decoded ? ", then `" + x.text(inst, a, size) + "` at " + hex(a)
                                : ", then bytes that do not decode at " + hex(a)) +
                       ", not padding");
        return false;
      }
      for (uint64_t b = a; b < a + size; ++b)
        if (code.fdeAt(b) || code.symbolFunctionAt(b)) {
          d = refuse(d, StockSiteRefusal::RegionPastFunctionEnd,
                     ends + ", then " + hex(b) + " of another function");
          return false;
        }
      DisplacedInstruction padding;
      padding.address = a;
      padding.size = static_cast<uint32_t>(size);
      padding.text = x.text(inst, a, size);
      plan.instructions.push_back(padding);
      plan.length += static_cast<uint32_t>(size);
      a += size;
    }
    return true;
  }

  // A jump table's bound holds only if the instructions from it to the jump
  // are entered by falling through, or at a join from branches of the
  // function the reader followed: why not, if a direct branch, a table entry,
  // a landing pad or a symbol enters them elsewhere.
  std::optional<std::string> guardEntered(Range function, const std::vector<JumpTable> &tables,
                                          const std::vector<uint64_t> &pads) {
    const auto &branches = code.branchTargets();
    for (const JumpTable &t : tables) {
      std::string bound = "the bound of the jump table of the indirect jump at " + hex(t.jump) +
                          " is not on every path to it: ";
      for (AddressRange r : t.guarded) {
        uint64_t symbol = 0;
        if (code.symbolInside(r.start - 1, r.end, symbol))
          return bound + "a symbol at " + hex(symbol);
        // Every byte: an entry inside an instruction would decode another way.
        for (uint64_t a = r.start; a < r.end; ++a) {
          bool join = std::find(t.joins.begin(), t.joins.end(), a) != t.joins.end();
          if (auto b = branches.find(a);
              b != branches.end() &&
              (!join || b->second.lowest < function.start || b->second.highest >= function.end))
            return bound + "a branch at " +
                   hex(b->second.lowest < function.start ? b->second.lowest : b->second.highest) +
                   " targets " + hex(a);
          if (std::find(pads.begin(), pads.end(), a) != pads.end())
            return bound + "a landing pad at " + hex(a);
          for (const JumpTable &other : tables)
            if (std::binary_search(other.targets.begin(), other.targets.end(), a))
              return bound + "a jump table targets " + hex(a);
        }
      }
    }
    return std::nullopt;
  }

  // How a displaced instruction is relocated, or nullopt with `d` refused.
  std::optional<DisplacedInstruction> classify(const Decoded &i, StockSiteDecision &d) {
    const X86Decoder &x = code.decoder();
    const llvm::MCInstrAnalysis &mia = *x.analysis;
    DisplacedInstruction out;
    out.address = i.address;
    out.size = static_cast<uint32_t>(i.size);
    out.text = x.text(i.inst, i.address, i.size);
    std::string where = "`" + out.text + "` at " + hex(i.address) + " in the region";
    llvm::StringRef name = x.opcodeName(i.inst);
    if (mia.isCall(i.inst)) {
      // Only `e8 rel32`, 5 bytes: after the 1-byte NOP it always completes the
      // region, so it is the last instruction and returns to the region's end.
      // Prefixed forms (66 e8 is a rel16 call on AMD) and indirect calls refuse.
      const CodeSection *s = code.sectionOf(i.address);
      uint64_t target = 0;
      if (name != "CALL64pcrel32" || i.size != 5 || s->bytes[i.address - s->address] != 0xe8 ||
          !mia.evaluateBranch(i.inst, i.address, i.size, target)) {
        d = refuse(d, StockSiteRefusal::CallInRegion, where);
        return std::nullopt;
      }
      out.kind = DisplacedKind::Call;
      out.target = target;
      return out;
    }
    if (name == "SYSCALL" || name == "SYSENTER" || name == "TRAP" ||
        startsWithAny(name, {"INT", "UD", "HLT"})) {
      d = refuse(d, StockSiteRefusal::SystemInstructionInRegion, where);
      return std::nullopt;
    }
    if (startsWithAny(name, {"ENDBR"})) {
      d = refuse(d, StockSiteRefusal::EndbrInRegion, where);
      return std::nullopt;
    }
    if (startsWithAny(name, {"LOOP", "JCXZ", "JECXZ", "JRCXZ", "XBEGIN"})) {
      d = refuse(d, StockSiteRefusal::ShortBranchOnlyInRegion, where);
      return std::nullopt;
    }
    if (mia.isReturn(i.inst)) {
      out.kind = DisplacedKind::Return;
      return out;
    }
    if (mia.isBranch(i.inst)) {
      uint64_t target = 0;
      if (mia.isIndirectBranch(i.inst) || !mia.evaluateBranch(i.inst, i.address, i.size, target)) {
        d = refuse(d, StockSiteRefusal::IndirectJump, "indirect jump in function: " + where);
        return std::nullopt;
      }
      out.kind = DisplacedKind::Branch;
      out.target = target;
      out.conditional = mia.isConditionalBranch(i.inst);
      return out;
    }
    if (usesEip(x, i.inst)) {
      d = refuse(d, StockSiteRefusal::UnknownInstructionInRegion,
                 where + ": a 32-bit (%eip) address wraps where a stub's would not");
      return std::nullopt;
    }
    if (std::optional<unsigned> dispOperand = ripDisplacementOperand(x, i.inst)) {
      const CodeSection *s = code.sectionOf(i.address);
      std::optional<uint32_t> offset =
          dispFieldOffset(x, i, s->bytes + (i.address - s->address), *dispOperand);
      if (!offset) {
        d = refuse(d, StockSiteRefusal::UnknownInstructionInRegion,
                   where + ": its displacement field is not found");
        return std::nullopt;
      }
      out.kind = DisplacedKind::RipRelative;
      out.dispOffset = *offset;
      out.dispSize = 4;
      out.target =
          i.address + i.size +
          static_cast<uint64_t>(static_cast<int64_t>(i.inst.getOperand(*dispOperand).getImm()));
      return out;
    }
    return out;
  }
};

StockSiteAnalysis::StockSiteAnalysis(const std::string &path)
    : impl_(std::make_unique<Impl>(path)) {}

StockSiteAnalysis::~StockSiteAnalysis() = default;

StockSiteDecision StockSiteAnalysis::analyse(uint64_t pc) { return impl_->analyse(pc); }

} // namespace sonde::codegen
