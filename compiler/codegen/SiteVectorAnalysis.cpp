#include "codegen/SiteVectorAnalysis.h"

#include "runtime/symbols/ElfFile.h"

#include <gelf.h>
#include <llvm/DebugInfo/DWARF/DWARFDataExtractor.h>
#include <llvm/DebugInfo/DWARF/DWARFDebugFrame.h>
#include <llvm/MC/MCAsmInfo.h>
#include <llvm/MC/MCContext.h>
#include <llvm/MC/MCDisassembler/MCDisassembler.h>
#include <llvm/MC/MCInst.h>
#include <llvm/MC/MCInstrAnalysis.h>
#include <llvm/MC/MCInstrInfo.h>
#include <llvm/MC/MCRegisterInfo.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/MCTargetOptions.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/Casting.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/TargetParser/Triple.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

namespace sonde::codegen {

namespace {

// One decoder for the process: LLVM's MC objects for x86-64.
struct X86Decoder {
  std::unique_ptr<llvm::MCRegisterInfo> registers;
  std::unique_ptr<llvm::MCAsmInfo> asmInfo;
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget;
  std::unique_ptr<llvm::MCInstrInfo> instrInfo;
  std::unique_ptr<llvm::MCContext> context;
  std::unique_ptr<llvm::MCDisassembler> disassembler;
  std::unique_ptr<llvm::MCInstrAnalysis> analysis;

  static X86Decoder *get() {
    static std::once_flag once;
    static X86Decoder *decoder = nullptr;
    std::call_once(once, [] {
      LLVMInitializeX86TargetInfo();
      LLVMInitializeX86TargetMC();
      LLVMInitializeX86Disassembler();
      auto d = std::make_unique<X86Decoder>();
      if (d->init())
        decoder = d.release();
    });
    return decoder;
  }

  bool init() {
    llvm::Triple triple("x86_64-unknown-linux-gnu");
    std::string error;
    const llvm::Target *t = llvm::TargetRegistry::lookupTarget(triple.str(), error);
    if (!t)
      return false;
    registers.reset(t->createMCRegInfo(triple.str()));
    if (!registers)
      return false;
    asmInfo.reset(t->createMCAsmInfo(*registers, triple.str(), llvm::MCTargetOptions()));
    subtarget.reset(t->createMCSubtargetInfo(triple.str(), "", ""));
    instrInfo.reset(t->createMCInstrInfo());
    if (!asmInfo || !subtarget || !instrInfo)
      return false;
    context =
        std::make_unique<llvm::MCContext>(triple, asmInfo.get(), registers.get(), subtarget.get());
    disassembler.reset(t->createMCDisassembler(*subtarget, *context));
    analysis.reset(t->createMCInstrAnalysis(instrInfo.get()));
    return disassembler && analysis;
  }
};

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

struct CodeSection {
  uint64_t address;
  const uint8_t *bytes;
  uint64_t size;
  bool plt;
};

struct Range {
  uint64_t start, end;
};

// What decoding one range found.
struct RangeFacts {
  bool decoded = true;            // every byte decoded
  bool vectorCode = false;        // a VEX/EVEX/XOP instruction
  bool vectorRegisters = false;   // an instruction using a vector register
  bool opaqueCall = false;        // an indirect call or a call through the PLT
  std::vector<uint64_t> calls;    // direct call targets outside the PLT
  std::vector<uint64_t> jumpsOut; // direct jump targets outside the range
};

// Sources of the direct branches (calls and jumps) to one address.
struct BranchSources {
  uint64_t lowest = UINT64_MAX, highest = 0;
};

constexpr int kMaxRegionRanges = 8;
constexpr int kMaxCallDepth = 3;

} // namespace

struct SiteVectorAnalysis::Impl {
  X86Decoder *decoder = X86Decoder::get();
  std::unique_ptr<symbols::ElfFile> elf;
  std::vector<CodeSection> sections;
  std::vector<Range> functions; // from symbols, sorted by start
  std::vector<Range> fdes;      // from .eh_frame, sorted by start
  std::optional<std::unordered_map<uint64_t, BranchSources>> branchTargets;
  std::map<uint64_t, bool> opaqueMemo; // by function start

  explicit Impl(const std::string &path) {
    std::string error;
    elf = symbols::ElfFile::open(path, error);
    if (!elf || !decoder)
      return;
    size_t names = 0;
    if (elf_getshdrstrndx(elf->get(), &names) != 0)
      return;
    for (Elf_Scn *scn = nullptr; (scn = elf_nextscn(elf->get(), scn));) {
      GElf_Shdr sh;
      if (!gelf_getshdr(scn, &sh))
        continue;
      if (sh.sh_type == SHT_PROGBITS && (sh.sh_flags & SHF_EXECINSTR)) {
        Elf_Data *data = elf_getdata(scn, nullptr);
        const char *name = elf_strptr(elf->get(), names, sh.sh_name);
        if (data && data->d_buf && data->d_size == sh.sh_size)
          sections.push_back({sh.sh_addr, static_cast<const uint8_t *>(data->d_buf), sh.sh_size,
                              name && std::string(name).rfind(".plt", 0) == 0});
      } else if (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM) {
        readFunctions(scn, sh);
      } else if (const char *name = elf_strptr(elf->get(), names, sh.sh_name);
                 sh.sh_type == SHT_PROGBITS && name && std::string(name) == ".eh_frame") {
        readFdes(scn, sh);
      }
    }
    auto byStart = [](const Range &a, const Range &b) { return a.start < b.start; };
    std::sort(functions.begin(), functions.end(), byStart);
    std::sort(fdes.begin(), fdes.end(), byStart);
  }

  void readFunctions(Elf_Scn *scn, const GElf_Shdr &sh) {
    Elf_Data *data = elf_getdata(scn, nullptr);
    if (!data || sh.sh_entsize == 0)
      return;
    for (size_t i = 0, n = sh.sh_size / sh.sh_entsize; i < n; ++i) {
      GElf_Sym sym;
      if (!gelf_getsym(data, static_cast<int>(i), &sym))
        continue;
      int type = GELF_ST_TYPE(sym.st_info);
      if ((type == STT_FUNC || type == STT_GNU_IFUNC) && sym.st_size > 0 &&
          sym.st_shndx != SHN_UNDEF)
        functions.push_back({sym.st_value, sym.st_value + sym.st_size});
    }
  }

  // Each FDE's whole range (libdw's lookups give only one CFI row of it).
  void readFdes(Elf_Scn *scn, const GElf_Shdr &sh) {
    Elf_Data *data = elf_getdata(scn, nullptr);
    if (!data || !data->d_buf || data->d_size != sh.sh_size)
      return;
    llvm::DWARFDataExtractor bytes(
        llvm::ArrayRef<uint8_t>(static_cast<const uint8_t *>(data->d_buf), data->d_size), true, 8);
    llvm::DWARFDebugFrame frames(llvm::Triple::x86_64, true, sh.sh_addr);
    if (llvm::Error e = frames.parse(bytes)) {
      llvm::consumeError(std::move(e));
      return; // without FDEs: Full wherever symbols do not help
    }
    for (const llvm::dwarf::FrameEntry &entry : frames.entries())
      if (const auto *fde = llvm::dyn_cast<llvm::dwarf::FDE>(&entry))
        if (fde->getAddressRange() > 0)
          fdes.push_back(
              {fde->getInitialLocation(), fde->getInitialLocation() + fde->getAddressRange()});
  }

  // The innermost of `ranges` (sorted by start) that covers `address`.
  static std::optional<Range> covering(const std::vector<Range> &ranges, uint64_t address) {
    auto it = std::upper_bound(ranges.begin(), ranges.end(), address,
                               [](uint64_t a, const Range &r) { return a < r.start; });
    // Symbols may nest or alias; the closest start that still covers wins.
    for (int looked = 0; it != ranges.begin() && looked < 16; ++looked) {
      --it;
      if (address < it->end)
        return *it;
    }
    return std::nullopt;
  }

  const CodeSection *sectionOf(uint64_t address) const {
    for (const CodeSection &s : sections)
      if (address >= s.address && address - s.address < s.size)
        return &s;
    return nullptr;
  }

  // The function holding `address`: its symbol, else its .eh_frame FDE.
  std::optional<Range> functionAt(uint64_t address) const {
    if (std::optional<Range> r = covering(functions, address))
      return r;
    return covering(fdes, address);
  }

  // Decodes [start, end), calling visit(address, inst, bytes, size) for each
  // instruction. False if some bytes do not decode.
  template <class Visit> bool decode(Range r, Visit visit) const {
    const CodeSection *s = sectionOf(r.start);
    if (!s || r.end - s->address > s->size)
      return false;
    for (uint64_t a = r.start; a < r.end;) {
      llvm::MCInst inst;
      uint64_t size = 0;
      llvm::ArrayRef<uint8_t> bytes(s->bytes + (a - s->address), r.end - a);
      if (decoder->disassembler->getInstruction(inst, size, bytes, a, llvm::nulls()) !=
              llvm::MCDisassembler::Success ||
          size == 0)
        return false;
      visit(a, inst, bytes.data(), size);
      a += size;
    }
    return true;
  }

  RangeFacts factsOf(Range r) const {
    RangeFacts f;
    const llvm::MCInstrAnalysis &mia = *decoder->analysis;
    f.decoded =
        decode(r, [&](uint64_t a, const llvm::MCInst &inst, const uint8_t *bytes, uint64_t size) {
          if (usesVectorExtension(bytes, size))
            f.vectorCode = true;
          if (!f.vectorRegisters && touchesVectorRegisters(*decoder, inst))
            f.vectorRegisters = true;
          uint64_t target = 0;
          bool direct = mia.evaluateBranch(inst, a, size, target);
          if (mia.isCall(inst)) {
            const CodeSection *s = direct ? sectionOf(target) : nullptr;
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

  // Every direct call and jump target in the object, with the span of its
  // sources. Undecodable bytes are stepped over one at a time.
  const std::unordered_map<uint64_t, BranchSources> &targets() {
    if (branchTargets)
      return *branchTargets;
    branchTargets.emplace();
    const llvm::MCInstrAnalysis &mia = *decoder->analysis;
    for (const CodeSection &s : sections) {
      for (uint64_t off = 0; off < s.size;) {
        llvm::MCInst inst;
        uint64_t size = 0, a = s.address + off, target = 0;
        llvm::ArrayRef<uint8_t> bytes(s.bytes + off, s.size - off);
        if (decoder->disassembler->getInstruction(inst, size, bytes, a, llvm::nulls()) !=
                llvm::MCDisassembler::Success ||
            size == 0) {
          ++off;
          continue;
        }
        if ((mia.isCall(inst) || mia.isBranch(inst)) && mia.evaluateBranch(inst, a, size, target)) {
          BranchSources &b = (*branchTargets)[target];
          b.lowest = std::min(b.lowest, a);
          b.highest = std::max(b.highest, a);
        }
        off += size;
      }
    }
    return *branchTargets;
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
    if (!decoder || !elf)
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
      auto it = targets().find(home->start);
      callersFollowTheAbi = it == targets().end() ||
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
