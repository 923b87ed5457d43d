#include "codegen/JumpTableReader.h"

#include "codegen/ElfMachineCode.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>

namespace sonde::codegen {

namespace {

constexpr uint64_t kMaxEntries = 1 << 16;
constexpr int64_t kCondAbove = 7;             // X86::CondCode COND_A: unsigned >
constexpr size_t kMaxWalk = 24;               // instructions looked at back along one straight line
constexpr size_t kMaxPathInstructions = 2048; // ... and over every path to the jump

// A memory operand (base, scale, index, displacement, segment) at operand `at`.
struct Memory {
  unsigned base = 0, index = 0, segment = 0;
  int64_t scale = 0, disp = 0;
  uint64_t next = 0; // its instruction's end, for a rip-relative displacement
  bool valid = false;
};

class Matcher {
public:
  Matcher(const ElfMachineCode &code, const std::vector<DecodedInstruction> &insts)
      : x_(code.decoder()), insts_(insts) {
    for (size_t i = 0; i < insts.size(); ++i) {
      uint64_t target = 0;
      const DecodedInstruction &d = insts[i];
      if ((x_.analysis->isBranch(d.inst) || x_.analysis->isCall(d.inst)) &&
          x_.analysis->evaluateBranch(d.inst, d.address, d.size, target))
        sources_[target].push_back(i);
    }
  }

  llvm::StringRef name(size_t i) const { return x_.opcodeName(insts_[i].inst); }
  const llvm::MCOperand &op(size_t i, unsigned n) const { return insts_[i].inst.getOperand(n); }
  unsigned reg(size_t i, unsigned n) const { return full(op(i, n).getReg()); }
  std::string text(size_t i) const {
    const DecodedInstruction &d = insts_[i];
    return "`" + x_.text(d.inst, d.address, d.size) + "` at " + hex(d.address);
  }

  // The 64-bit register holding `r` (RAX for EAX, AL...).
  unsigned full(unsigned r) const {
    unsigned out = r;
    for (llvm::MCPhysReg super : x_.registers->superregs(r))
      if (x_.registers->superregs(super).empty())
        out = super;
    return out;
  }

  bool writes(size_t i, unsigned fullReg) const {
    return fullReg && x_.instrInfo->get(insts_[i].inst.getOpcode())
                          .hasDefOfPhysReg(insts_[i].inst, fullReg, *x_.registers);
  }
  bool stores(size_t i) const { return x_.instrInfo->get(insts_[i].inst.getOpcode()).mayStore(); }

  // Whether control or the machine's state may leave the straight line here.
  bool transfers(size_t i) const {
    const llvm::MCInst &inst = insts_[i].inst;
    llvm::StringRef n = name(i);
    return x_.instrInfo->get(inst.getOpcode()).mayAffectControlFlow(inst, *x_.registers) ||
           x_.analysis->isCall(inst) || x_.analysis->isReturn(inst) ||
           x_.analysis->isBranch(inst) || n.starts_with("SYS") || n.starts_with("INT") ||
           n.starts_with("UD") || n.starts_with("HLT") || n == "TRAP" || n.starts_with("XBEGIN") ||
           n.starts_with("XABORT") || n.starts_with("LOOP") || n.contains("CXZ");
  }

  // 32-bit address registers (an 0x67 prefix) leave it not `valid`.
  Memory memory(size_t i, unsigned at) const {
    Memory m;
    m.base = op(i, at).getReg();
    m.scale = op(i, at + 1).getImm();
    m.index = op(i, at + 2).getReg();
    m.disp = op(i, at + 3).isImm() ? op(i, at + 3).getImm() : 0;
    m.segment = op(i, at + 4).getReg();
    m.next = insts_[i].address + insts_[i].size;
    m.valid = (!m.base || isRip(m.base) || full(m.base) == m.base) &&
              (!m.index || full(m.index) == m.index) && op(i, at + 3).isImm();
    return m;
  }
  bool isRip(unsigned r) const { return r && x_.registers->getName(r) == llvm::StringRef("RIP"); }
  bool sameMemory(const Memory &a, const Memory &b) const {
    if (!a.valid || !b.valid || a.base != b.base || a.index != b.index || a.scale != b.scale ||
        a.segment != b.segment)
      return false;
    return isRip(a.base) ? a.next + a.disp == b.next + b.disp : a.disp == b.disp;
  }
  // Whether instruction i writes a register `m`'s address uses.
  bool writesAddressOf(size_t i, const Memory &m) const {
    return (!isRip(m.base) && writes(i, m.base)) || writes(i, m.index);
  }

  // The instruction before `from` that writes `fullReg`, stepping over
  // others that do not leave the straight line; nullopt if none is found.
  std::optional<size_t> writerOf(unsigned fullReg, size_t from, size_t stop,
                                 std::string &why) const {
    for (size_t i = from; i-- > stop;) {
      // A jcc is stepped over along its fall-through (the bound's `ja`, when
      // the table's base is loaded before it); readTable refuses any other.
      if (transfers(i) && !x_.analysis->isConditionalBranch(insts_[i].inst)) {
        why = text(i) + " is between the jump and the write of its register";
        return std::nullopt;
      }
      if (writes(i, fullReg))
        return i;
    }
    why = "the jump's register is not written within " + std::to_string(kMaxWalk) +
          " instructions before it";
    return std::nullopt;
  }

  // A path back from the jump to the instruction that last wrote its
  // register: `writer`, whose value reaches instruction `end` in a straight line.
  struct Path {
    size_t writer, end;
  };
  // Every path back from instruction k (whose incoming `fullReg` is wanted,
  // reached in a straight line down to `end`) to a write of `fullReg`. At an
  // instruction some direct branches of the function target (a join, as
  // where GCC merges a computed goto's dispatches), each branch is followed
  // too; `lines` gets the [first, last] instructions walked, `joins` the joins.
  bool writersOf(unsigned fullReg, size_t k, size_t end, std::vector<Path> &paths,
                 std::vector<std::pair<size_t, size_t>> &lines, std::vector<size_t> &joins,
                 size_t &budget, std::string &why) const {
    for (size_t walked = 0;; ++walked) {
      if (walked > kMaxWalk || budget == 0) {
        why = "the jump's register is not written within " + std::to_string(kMaxWalk) +
              " instructions of a path to it";
        return false;
      }
      --budget;
      if (auto src = sources_.find(insts_[k].address); src != sources_.end()) {
        joins.push_back(k);
        lines.push_back({k, end});
        for (size_t from : src->second) {
          if (x_.analysis->isCall(insts_[from].inst)) {
            why = text(from) + " calls into the path to the jump";
            return false;
          }
          if (!writersOf(fullReg, from, from, paths, lines, joins, budget, why))
            return false;
        }
        if (k == 0 || x_.analysis->isUnconditionalBranch(insts_[k - 1].inst) ||
            x_.analysis->isReturn(insts_[k - 1].inst))
          return true;
        end = k - 1;
      }
      if (k == 0) {
        why = "the function starts before the jump's register is written";
        return false;
      }
      size_t i = k - 1;
      if (transfers(i)) {
        why = text(i) + " is between the jump and the write of its register";
        return false;
      }
      if (writes(i, fullReg)) {
        paths.push_back({i, end});
        lines.push_back({i, end});
        return true;
      }
      k = i;
    }
  }

  enum class Tracked { Register64, Register32, Memory32, Memory64 };

  // The bound of the index register `index` as used by instruction `use`:
  // the largest index, and the first instruction after the bound's.
  struct Bound {
    uint64_t largest;
    size_t guardedFrom;
    bool byJa; // guardedFrom is the `ja` of a `cmp; ja`
  };
  std::optional<Bound> bound(unsigned index, size_t use, size_t stop, std::string &why) const {
    Tracked tracked = Tracked::Register64;
    unsigned r = index;
    Memory m;
    for (size_t i = use; i-- > stop;) {
      llvm::StringRef n = name(i);
      if ((n == "JCC_1" || n == "JCC_4") && i > stop) {
        std::optional<uint64_t> limit;
        if (op(i, 1).getImm() == kCondAbove)
          limit = comparedLimit(i - 1, tracked, r, m);
        if (!limit) {
          why = text(i - 1) + ", " + text(i) + " is not an unsigned bound check of the index";
          return std::nullopt;
        }
        return Bound{*limit, i, true};
      }
      if (transfers(i)) {
        why = text(i) + " is between the jump and its index's bound";
        return std::nullopt;
      }
      if (tracked == Tracked::Memory32 || tracked == Tracked::Memory64) {
        if (stores(i) || writesAddressOf(i, m)) {
          why = text(i) + " may change the index's memory between its check and its load";
          return std::nullopt;
        }
        continue;
      }
      if (!writes(i, r))
        continue;
      if ((n == "MOV32rr" || n == "MOV32rr_REV") && reg(i, 0) == r) {
        tracked = Tracked::Register32; // zero-extends: the index is the source's low 32 bits
        r = reg(i, 1);
      } else if (n == "MOV32rm" && reg(i, 0) == r) {
        tracked = Tracked::Memory32;
        m = memory(i, 1);
      } else if (n == "MOV64rm" && reg(i, 0) == r && tracked == Tracked::Register64) {
        tracked = Tracked::Memory64;
        m = memory(i, 1);
      } else if ((n == "MOVZX32rr8" || n == "MOVZX32rm8") && reg(i, 0) == r) {
        return Bound{0xff, i + 1, false};
      } else {
        why = "the index's write " + text(i) + " is not a bound this reader knows";
        return std::nullopt;
      }
    }
    why = "no bound check of the index within " + std::to_string(kMaxWalk) +
          " instructions before the jump";
    return std::nullopt;
  }

  // The immediate N of instruction i if it is `cmp $N` of what is tracked.
  std::optional<uint64_t> comparedLimit(size_t i, Tracked t, unsigned r, const Memory &m) const {
    llvm::StringRef n = name(i);
    const llvm::MCInst &inst = insts_[i].inst;
    if (inst.getNumOperands() == 0 || !inst.getOperand(inst.getNumOperands() - 1).isImm())
      return std::nullopt;
    int64_t imm = inst.getOperand(inst.getNumOperands() - 1).getImm();
    switch (t) {
    case Tracked::Register64:
      if ((n == "CMP64ri8" || n == "CMP64ri32") && reg(i, 0) == r)
        return static_cast<uint64_t>(imm);
      break;
    case Tracked::Register32:
      if (((n == "CMP32ri8" || n == "CMP32ri") && reg(i, 0) == r) ||
          (n == "CMP32i32" && x_.registers->getName(r) == llvm::StringRef("RAX")))
        return static_cast<uint32_t>(imm);
      break;
    case Tracked::Memory32:
      if ((n == "CMP32mi8" || n == "CMP32mi") && sameMemory(memory(i, 0), m))
        return static_cast<uint32_t>(imm);
      break;
    case Tracked::Memory64:
      if ((n == "CMP64mi8" || n == "CMP64mi32") && sameMemory(memory(i, 0), m))
        return static_cast<uint64_t>(imm);
      break;
    }
    return std::nullopt;
  }

private:
  const X86Decoder &x_;
  const std::vector<DecodedInstruction> &insts_;
  std::unordered_map<uint64_t, std::vector<size_t>> sources_; // direct branches to an address
};

} // namespace

namespace {

// The entries of the table that instruction `load` reads (the path's writer
// of the jump's register, or the `jmp *TABLE(,%reg,8)` itself), with what
// must be entered only by falling through added to `out`; false with `why`.
bool readTable(const ElfMachineCode &code, const Matcher &m,
               const std::vector<DecodedInstruction> &insts, size_t load, size_t end,
               JumpTable &out, std::string &why) {
  size_t stop = load > kMaxWalk ? load - kMaxWalk : 0;
  bool relative = false;
  unsigned indexReg = 0;
  uint64_t table = 0;
  size_t use = load; // the instruction indexing the table
  std::optional<size_t> lea;
  llvm::StringRef n = m.name(load);
  if (n == "JMP64m" || n == "MOV64rm") {
    Memory mem = m.memory(load, n == "JMP64m" ? 0 : 1);
    if (!mem.valid || mem.base || !mem.index || mem.scale != 8 || mem.segment) {
      why = m.text(load) + " is not a `TABLE(,%reg,8)` load";
      return false;
    }
    table = static_cast<uint64_t>(mem.disp);
    indexReg = mem.index;
  } else if ((n == "ADD64rr" || n == "ADD64rr_REV") && m.reg(load, 2) != m.reg(load, 0)) {
    unsigned z = m.reg(load, 0), base = m.reg(load, 2);
    std::optional<size_t> entry = m.writerOf(z, load, stop, why);
    if (!entry)
      return false;
    for (size_t i = *entry + 1; i < load; ++i)
      if (m.writes(i, base)) {
        why = m.text(i) + " changes the table's base before the add";
        return false;
      }
    Memory mem = m.memory(*entry, 1);
    if (m.name(*entry) != "MOVSX64rm32" || !mem.valid || m.reg(*entry, 0) != z ||
        mem.base != base || !mem.index || mem.scale != 4 || mem.disp != 0 || mem.segment) {
      why = m.text(*entry) + " is not a `movslq (%base,%reg,4)` of the table";
      return false;
    }
    lea = m.writerOf(base, *entry, stop, why);
    if (!lea)
      return false;
    Memory at = m.memory(*lea, 1);
    if (m.name(*lea) != "LEA64r" || !at.valid || !m.isRip(at.base) || at.index || at.segment) {
      why = m.text(*lea) + " is not a `lea TABLE(%rip)` of the table's base";
      return false;
    }
    table = at.next + static_cast<uint64_t>(at.disp);
    relative = true;
    indexReg = mem.index;
    use = *entry;
  } else {
    why = "the jump's register is last written by " + m.text(load) +
          ", not a table load this reader knows";
    return false;
  }

  std::optional<Matcher::Bound> b = m.bound(indexReg, use, stop, why);
  if (!b)
    return false;
  size_t guarded = lea ? std::min(b->guardedFrom, *lea + 1) : b->guardedFrom;
  for (size_t i = guarded; i < load; ++i)
    if (!(b->byJa && i == b->guardedFrom) && m.transfers(i)) {
      why = m.text(i) + " is between the bound and the jump";
      return false;
    }
  if (b->largest >= kMaxEntries) {
    why = "the bound " + std::to_string(b->largest) + " is too large for a table";
    return false;
  }
  uint64_t entries = b->largest + 1, entrySize = relative ? 4 : 8;
  if (!relative && !code.positionDependent()) {
    why = "a table of absolute addresses in a position-independent object (relocated at load)";
    return false;
  }
  const uint8_t *bytes = code.readOnlyBytes(table, entries * entrySize);
  if (!bytes) {
    why = "the table at " + hex(table) + " (" + std::to_string(entries) +
          " entries) is not in a read-only section";
    return false;
  }
  for (uint64_t e = 0; e < entries; ++e) {
    if (relative) {
      int32_t offset;
      std::memcpy(&offset, bytes + 4 * e, 4);
      out.targets.push_back(table + static_cast<uint64_t>(int64_t(offset)));
    } else {
      uint64_t target;
      std::memcpy(&target, bytes + 8 * e, 8);
      out.targets.push_back(target);
    }
  }
  if (out.tables.empty() || out.tables.back() != table)
    out.tables.push_back(table);
  out.entries += entries;
  out.guarded.push_back({insts[guarded].address, insts[end].address + insts[end].size});
  return true;
}

} // namespace

std::optional<JumpTable> readJumpTable(const ElfMachineCode &code,
                                       const std::vector<DecodedInstruction> &insts, size_t index,
                                       std::string &why) {
  Matcher m(code, insts);
  JumpTable out;
  out.jump = insts[index].address;
  llvm::StringRef n = m.name(index);
  if (n == "JMP64m") {
    if (!readTable(code, m, insts, index, index, out, why))
      return std::nullopt;
  } else if (n == "JMP64r") {
    std::vector<Matcher::Path> paths;
    std::vector<std::pair<size_t, size_t>> lines;
    std::vector<size_t> joins;
    size_t budget = kMaxPathInstructions;
    if (!m.writersOf(m.reg(index, 0), index, index, paths, lines, joins, budget, why))
      return std::nullopt;
    for (const Matcher::Path &p : paths)
      if (!readTable(code, m, insts, p.writer, p.end, out, why))
        return std::nullopt;
    for (auto [first, last] : lines)
      out.guarded.push_back({insts[first].address, insts[last].address + insts[last].size});
    for (size_t j : joins)
      out.joins.push_back(insts[j].address);
  } else {
    why = "not a `jmp *%reg` or `jmp *TABLE(,%reg,8)`";
    return std::nullopt;
  }
  std::sort(out.targets.begin(), out.targets.end());
  out.targets.erase(std::unique(out.targets.begin(), out.targets.end()), out.targets.end());
  return out;
}

std::optional<JumpTable> readJumpTableAt(const std::string &path, uint64_t jump, std::string &why) {
  ElfMachineCode code(path);
  if (!code.valid()) {
    why = path + " cannot be read";
    return std::nullopt;
  }
  std::optional<FdeRange> fde = code.fdeAt(jump);
  std::optional<Range> function =
      fde ? std::optional<Range>(fde->range) : code.symbolFunctionAt(jump);
  std::vector<DecodedInstruction> insts;
  if (!function || !code.decode(*function, [&](uint64_t a, const llvm::MCInst &inst,
                                               const uint8_t *, uint64_t size) {
        insts.push_back({a, size, inst});
      })) {
    why = "no decodable function covers " + hex(jump);
    return std::nullopt;
  }
  for (size_t i = 0; i < insts.size(); ++i)
    if (insts[i].address == jump)
      return readJumpTable(code, insts, i, why);
  why = hex(jump) + " is not an instruction of its function";
  return std::nullopt;
}

} // namespace sonde::codegen
