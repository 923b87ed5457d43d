// The machine code of one x86-64 ELF object as the site analyses read it
// (SiteVectorAnalysis, StockSiteAnalysis): executable sections, function
// bounds from symbols and .eh_frame FDEs (with each FDE's LSDA), every defined
// symbol's address, and LLVM's MC disassembler over them. Codegen-private: it
// exposes LLVM types.
#pragma once

#include "runtime/symbols/ElfFile.h"

#include <gelf.h>

#include <llvm/MC/MCDisassembler/MCDisassembler.h>
#include <llvm/MC/MCInst.h>
#include <llvm/MC/MCInstPrinter.h>
#include <llvm/MC/MCInstrAnalysis.h>
#include <llvm/MC/MCInstrInfo.h>
#include <llvm/MC/MCRegisterInfo.h>
#include <llvm/MC/MCSubtargetInfo.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace sonde::codegen {

// "0x1a2b": addresses in the site analyses' texts.
std::string hex(uint64_t value);

// One decoder for the process: LLVM's MC objects for x86-64.
struct X86Decoder {
  std::unique_ptr<llvm::MCRegisterInfo> registers;
  std::unique_ptr<llvm::MCAsmInfo> asmInfo;
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget;
  std::unique_ptr<llvm::MCInstrInfo> instrInfo;
  std::unique_ptr<llvm::MCContext> context;
  std::unique_ptr<llvm::MCDisassembler> disassembler;
  std::unique_ptr<llvm::MCInstrAnalysis> analysis;
  std::unique_ptr<llvm::MCInstPrinter> printer; // AT&T syntax

  // Null if LLVM's x86 target cannot be set up.
  static X86Decoder *get();
  // The instruction's name as LLVM spells its opcode (e.g. "JMP_1", "SYSCALL").
  llvm::StringRef opcodeName(const llvm::MCInst &inst) const;
  // The `size`-byte instruction at `address` in AT&T syntax, branch targets
  // as addresses ("jne 0x4623be").
  std::string text(const llvm::MCInst &inst, uint64_t address, uint64_t size) const;

private:
  bool init();
};

struct CodeSection {
  uint64_t address;
  const uint8_t *bytes;
  uint64_t size;
  bool plt;
};

struct Range {
  uint64_t start, end;
};

struct FdeRange {
  Range range;
  std::optional<uint64_t> lsda; // the address of its LSDA, from the CIE's augmentation
};

// One instruction of a linear decode.
struct DecodedInstruction {
  uint64_t address;
  uint64_t size;
  llvm::MCInst inst;
};

// Sources of the direct branches (calls and jumps) to one address.
struct BranchSources {
  uint64_t lowest = UINT64_MAX, highest = 0;
};

class ElfMachineCode {
public:
  // Reads the ELF object at `path`; valid() is false if it or the decoder
  // cannot be read.
  explicit ElfMachineCode(const std::string &path);
  bool valid() const { return elf_ && decoder_; }
  const X86Decoder &decoder() const { return *decoder_; }
  // False when .eh_frame exists but does not parse.
  bool fdesRead() const { return fdesRead_; }

  const CodeSection *sectionOf(uint64_t address) const;
  // The innermost sized function symbol covering `address`.
  std::optional<Range> symbolFunctionAt(uint64_t address) const;
  // The FDE covering `address`.
  std::optional<FdeRange> fdeAt(uint64_t address) const;
  // Whether a defined symbol (any type but section and file) has a value in (start, end).
  bool symbolInside(uint64_t start, uint64_t end, uint64_t &which) const;
  // Bytes [address, address+size) of any allocated section, or null.
  const uint8_t *allocatedBytes(uint64_t address, uint64_t size) const;
  // The same, only from a section the program cannot write: SHF_WRITE unset,
  // in a PT_LOAD segment without PF_W.
  const uint8_t *readOnlyBytes(uint64_t address, uint64_t size) const;
  // An ET_EXEC object: its absolute addresses are not relocated at load.
  bool positionDependent() const { return positionDependent_; }

  // Decodes [start, end), calling visit(address, inst, bytes, size) for each
  // instruction. False if some bytes do not decode (visit has then seen the
  // instructions before them).
  template <class Visit> bool decode(Range r, Visit visit) const {
    const CodeSection *s = sectionOf(r.start);
    if (!s || r.end - s->address > s->size)
      return false;
    for (uint64_t a = r.start; a < r.end;) {
      llvm::MCInst inst;
      uint64_t size = 0;
      llvm::ArrayRef<uint8_t> bytes(s->bytes + (a - s->address), r.end - a);
      if (decoder_->disassembler->getInstruction(inst, size, bytes, a, llvm::nulls()) !=
              llvm::MCDisassembler::Success ||
          size == 0)
        return false;
      visit(a, inst, bytes.data(), size);
      a += size;
    }
    return true;
  }

  // Every direct call and jump target in the object's executable sections
  // (decoded linearly, undecodable bytes stepped over one at a time), with the
  // span of its sources. Computed on first use.
  const std::unordered_map<uint64_t, BranchSources> &branchTargets();

private:
  struct DataSection {
    uint64_t address;
    const uint8_t *bytes;
    uint64_t size;
    bool writable;
  };
  const DataSection *dataSectionOf(uint64_t address, uint64_t size) const;
  void readFunctions(Elf_Scn *scn, const GElf_Shdr &sh);
  void readFdes(Elf_Scn *scn, const GElf_Shdr &sh);

  X86Decoder *decoder_ = X86Decoder::get();
  std::unique_ptr<symbols::ElfFile> elf_;
  std::vector<CodeSection> sections_;
  std::vector<DataSection> allocated_;
  std::vector<Range> readOnlySegments_;
  std::vector<Range> functions_;  // sorted by start
  std::vector<FdeRange> fdes_;    // sorted by start
  std::vector<uint64_t> symbols_; // sorted
  bool fdesRead_ = true;
  bool positionDependent_ = false;
  std::optional<std::unordered_map<uint64_t, BranchSources>> branchTargets_;
};

} // namespace sonde::codegen
