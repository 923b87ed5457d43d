#include "codegen/ElfMachineCode.h"

#include <cstdio>
#include <llvm/DebugInfo/DWARF/DWARFDataExtractor.h>
#include <llvm/DebugInfo/DWARF/DWARFDebugFrame.h>
#include <llvm/MC/MCAsmInfo.h>
#include <llvm/MC/MCContext.h>
#include <llvm/MC/MCTargetOptions.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/Casting.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/TargetParser/Triple.h>

#include <algorithm>
#include <mutex>

namespace sonde::codegen {

std::string hex(uint64_t value) {
  char buffer[24];
  std::snprintf(buffer, sizeof buffer, "0x%llx", static_cast<unsigned long long>(value));
  return buffer;
}

X86Decoder *X86Decoder::get() {
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

llvm::StringRef X86Decoder::opcodeName(const llvm::MCInst &inst) const {
  return instrInfo->getName(inst.getOpcode());
}

std::string X86Decoder::text(const llvm::MCInst &inst, uint64_t address, uint64_t size) const {
  std::string out;
  llvm::raw_string_ostream os(out);
  // X86's printer adds branch displacements to the address it is given: the next instruction's.
  printer->printInst(&inst, address + size, "", *subtarget, os);
  os.flush();
  size_t first = out.find_first_not_of(" \t");
  out = first == std::string::npos ? "" : out.substr(first);
  for (char &c : out)
    if (c == '\t')
      c = ' ';
  return out;
}

bool X86Decoder::init() {
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
  printer.reset(t->createMCInstPrinter(triple, 0, *asmInfo, *instrInfo, *registers));
  if (printer)
    printer->setPrintBranchImmAsAddress(true);
  return disassembler && analysis && printer;
}

ElfMachineCode::ElfMachineCode(const std::string &path) {
  std::string error;
  elf_ = symbols::ElfFile::open(path, error);
  if (!elf_ || !decoder_)
    return;
  size_t names = 0;
  if (elf_getshdrstrndx(elf_->get(), &names) != 0)
    return;
  GElf_Ehdr header;
  positionDependent_ = gelf_getehdr(elf_->get(), &header) && header.e_type == ET_EXEC;
  size_t segments = 0;
  if (elf_getphdrnum(elf_->get(), &segments) == 0)
    for (size_t i = 0; i < segments; ++i) {
      GElf_Phdr ph;
      if (gelf_getphdr(elf_->get(), static_cast<int>(i), &ph) && ph.p_type == PT_LOAD &&
          !(ph.p_flags & PF_W))
        readOnlySegments_.push_back({ph.p_vaddr, ph.p_vaddr + ph.p_memsz});
    }
  for (Elf_Scn *scn = nullptr; (scn = elf_nextscn(elf_->get(), scn));) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh))
      continue;
    const char *name = elf_strptr(elf_->get(), names, sh.sh_name);
    std::string sectionName = name ? name : "";
    if (sh.sh_type == SHT_PROGBITS && (sh.sh_flags & SHF_ALLOC)) {
      Elf_Data *data = elf_getdata(scn, nullptr);
      if (data && data->d_buf && data->d_size == sh.sh_size) {
        auto *bytes = static_cast<const uint8_t *>(data->d_buf);
        allocated_.push_back({sh.sh_addr, bytes, sh.sh_size, (sh.sh_flags & SHF_WRITE) != 0});
        if (sh.sh_flags & SHF_EXECINSTR)
          sections_.push_back({sh.sh_addr, bytes, sh.sh_size, sectionName.rfind(".plt", 0) == 0});
      }
      if (sectionName == ".eh_frame")
        readFdes(scn, sh);
    } else if (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM) {
      readFunctions(scn, sh);
    }
  }
  std::sort(functions_.begin(), functions_.end(),
            [](const Range &a, const Range &b) { return a.start < b.start; });
  std::sort(fdes_.begin(), fdes_.end(),
            [](const FdeRange &a, const FdeRange &b) { return a.range.start < b.range.start; });
  std::sort(symbols_.begin(), symbols_.end());
}

void ElfMachineCode::readFunctions(Elf_Scn *scn, const GElf_Shdr &sh) {
  Elf_Data *data = elf_getdata(scn, nullptr);
  if (!data || sh.sh_entsize == 0)
    return;
  for (size_t i = 0, n = sh.sh_size / sh.sh_entsize; i < n; ++i) {
    GElf_Sym sym;
    if (!gelf_getsym(data, static_cast<int>(i), &sym) || sym.st_shndx == SHN_UNDEF)
      continue;
    int type = GELF_ST_TYPE(sym.st_info);
    if ((type == STT_FUNC || type == STT_GNU_IFUNC) && sym.st_size > 0)
      functions_.push_back({sym.st_value, sym.st_value + sym.st_size});
    if (type != STT_SECTION && type != STT_FILE && type != STT_TLS && sym.st_shndx != SHN_ABS)
      symbols_.push_back(sym.st_value);
  }
}

// Each FDE's whole range (libdw's lookups give only one CFI row of it).
void ElfMachineCode::readFdes(Elf_Scn *scn, const GElf_Shdr &sh) {
  Elf_Data *data = elf_getdata(scn, nullptr);
  if (!data || !data->d_buf || data->d_size != sh.sh_size)
    return;
  llvm::DWARFDataExtractor bytes(
      llvm::ArrayRef<uint8_t>(static_cast<const uint8_t *>(data->d_buf), data->d_size), true, 8);
  llvm::DWARFDebugFrame frames(llvm::Triple::x86_64, true, sh.sh_addr);
  if (llvm::Error e = frames.parse(bytes)) {
    llvm::consumeError(std::move(e));
    fdesRead_ = false;
    return;
  }
  for (const llvm::dwarf::FrameEntry &entry : frames.entries())
    if (const auto *fde = llvm::dyn_cast<llvm::dwarf::FDE>(&entry))
      if (fde->getAddressRange() > 0)
        fdes_.push_back(
            {{fde->getInitialLocation(), fde->getInitialLocation() + fde->getAddressRange()},
             fde->getLSDAAddress()});
}

const CodeSection *ElfMachineCode::sectionOf(uint64_t address) const {
  for (const CodeSection &s : sections_)
    if (address >= s.address && address - s.address < s.size)
      return &s;
  return nullptr;
}

const ElfMachineCode::DataSection *ElfMachineCode::dataSectionOf(uint64_t address,
                                                                 uint64_t size) const {
  for (const DataSection &s : allocated_)
    if (address >= s.address && address - s.address <= s.size &&
        size <= s.size - (address - s.address))
      return &s;
  return nullptr;
}

const uint8_t *ElfMachineCode::allocatedBytes(uint64_t address, uint64_t size) const {
  const DataSection *s = dataSectionOf(address, size);
  return s ? s->bytes + (address - s->address) : nullptr;
}

const uint8_t *ElfMachineCode::readOnlyBytes(uint64_t address, uint64_t size) const {
  const DataSection *s = dataSectionOf(address, size);
  if (!s || s->writable)
    return nullptr;
  for (const Range &r : readOnlySegments_)
    if (address >= r.start && address + size <= r.end)
      return s->bytes + (address - s->address);
  return nullptr;
}

std::optional<Range> ElfMachineCode::symbolFunctionAt(uint64_t address) const {
  auto it = std::upper_bound(functions_.begin(), functions_.end(), address,
                             [](uint64_t a, const Range &r) { return a < r.start; });
  // Symbols may nest or alias; the closest start that still covers wins.
  for (int looked = 0; it != functions_.begin() && looked < 16; ++looked) {
    --it;
    if (address < it->end)
      return *it;
  }
  return std::nullopt;
}

std::optional<FdeRange> ElfMachineCode::fdeAt(uint64_t address) const {
  auto it = std::upper_bound(fdes_.begin(), fdes_.end(), address,
                             [](uint64_t a, const FdeRange &r) { return a < r.range.start; });
  for (int looked = 0; it != fdes_.begin() && looked < 16; ++looked) {
    --it;
    if (address < it->range.end)
      return *it;
  }
  return std::nullopt;
}

bool ElfMachineCode::symbolInside(uint64_t start, uint64_t end, uint64_t &which) const {
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), start);
  if (it == symbols_.end() || *it >= end)
    return false;
  which = *it;
  return true;
}

const std::unordered_map<uint64_t, BranchSources> &ElfMachineCode::branchTargets() {
  if (branchTargets_)
    return *branchTargets_;
  branchTargets_.emplace();
  const llvm::MCInstrAnalysis &mia = *decoder_->analysis;
  for (const CodeSection &s : sections_) {
    for (uint64_t off = 0; off < s.size;) {
      llvm::MCInst inst;
      uint64_t size = 0, a = s.address + off, target = 0;
      llvm::ArrayRef<uint8_t> bytes(s.bytes + off, s.size - off);
      if (decoder_->disassembler->getInstruction(inst, size, bytes, a, llvm::nulls()) !=
              llvm::MCDisassembler::Success ||
          size == 0) {
        ++off;
        continue;
      }
      if ((mia.isCall(inst) || mia.isBranch(inst)) && mia.evaluateBranch(inst, a, size, target)) {
        BranchSources &b = (*branchTargets_)[target];
        b.lowest = std::min(b.lowest, a);
        b.highest = std::max(b.highest, a);
      }
      off += size;
    }
  }
  return *branchTargets_;
}

} // namespace sonde::codegen
