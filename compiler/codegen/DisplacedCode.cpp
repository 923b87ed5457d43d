#include "codegen/DisplacedCode.h"

#include "codegen/ElfMachineCode.h"

namespace sonde::codegen {

namespace {

// Branch hints (cs/ds) and the MPX `bnd` prefix: meaningless in the relocated
// form, dropped.
bool isBranchPrefix(uint8_t byte) { return byte == 0x2e || byte == 0x3e || byte == 0xf2; }

class CodeWriter {
public:
  explicit CodeWriter(DisplacedCode &out) : out_(out) {}

  uint32_t size() const { return static_cast<uint32_t>(out_.code.size()); }
  void bytes(const uint8_t *p, size_t n) { out_.code.insert(out_.code.end(), p, p + n); }
  void byte(uint8_t b) { out_.code.push_back(b); }
  void zeros(size_t n) { out_.code.insert(out_.code.end(), n, 0); }

  // A 4-byte field relative to the end of the instruction it closes.
  void rel32To(uint64_t target) {
    uint32_t at = size();
    zeros(4);
    out_.fixups.push_back({at, CodeFixupKind::Rel32, at + 4, target});
  }
  void ripFixup(uint32_t fieldOffset, uint32_t instructionEnd, uint64_t target) {
    out_.fixups.push_back({fieldOffset, CodeFixupKind::Rel32, instructionEnd, target});
  }

private:
  DisplacedCode &out_;
};

} // namespace

std::optional<DisplacedCode> relocateDisplaced(const StockSitePlan &plan, std::string *error) {
  DisplacedCode out;
  out.pc = plan.pc;
  out.length = plan.length;
  out.original = plan.bytes;
  if (plan.bytes.size() != plan.length) {
    *error = "the region's bytes are missing";
    return std::nullopt;
  }
  CodeWriter w(out);
  bool transferred = false;     // control has left: the rest never runs
  std::optional<uint32_t> push; // the call's push: its disp32 field
  uint64_t returnAddress = 0;
  for (const DisplacedInstruction &i : plan.instructions) {
    if (transferred)
      break;
    if (i.address < plan.pc || i.address + i.size > plan.pc + plan.length) {
      *error = "an instruction at " + hex(i.address) + " is outside the region";
      return std::nullopt;
    }
    const uint8_t *bytes = plan.bytes.data() + (i.address - plan.pc);
    if (i.address == plan.pc)
      continue; // the NOP: the handler takes its place
    out.boundaries.push_back({static_cast<uint32_t>(i.address - plan.pc), w.size()});
    switch (i.kind) {
    case DisplacedKind::Copy: w.bytes(bytes, i.size); break;
    case DisplacedKind::Return:
      w.bytes(bytes, i.size);
      transferred = true;
      break;
    case DisplacedKind::RipRelative:
      if (i.dispSize != 4 || i.dispOffset + 4 > i.size) {
        *error = "`" + i.text + "` at " + hex(i.address) + ": no disp32 field where expected";
        return std::nullopt;
      }
      w.ripFixup(w.size() + i.dispOffset, w.size() + i.size, i.target);
      w.bytes(bytes, i.size);
      break;
    case DisplacedKind::Branch:
    case DisplacedKind::Call: {
      uint32_t op = 0;
      while (op < i.size && isBranchPrefix(bytes[op]))
        ++op;
      uint8_t b0 = op < i.size ? bytes[op] : 0, b1 = op + 1 < i.size ? bytes[op + 1] : 0;
      if (i.kind == DisplacedKind::Call && b0 == 0xe8) {
        w.byte(0xff); // push qword ptr [rip + disp32]: the return address after the code
        w.byte(0x35);
        push = w.size();
        w.zeros(4);
        w.byte(0xe9);
        w.rel32To(i.target);
        returnAddress = i.address + i.size;
        transferred = true;
      } else if (i.kind == DisplacedKind::Branch && (b0 == 0xeb || b0 == 0xe9)) {
        w.byte(0xe9);
        w.rel32To(i.target);
        transferred = true;
      } else if (i.kind == DisplacedKind::Branch && b0 >= 0x70 && b0 <= 0x7f) {
        w.byte(0x0f);
        w.byte(static_cast<uint8_t>(0x80 + (b0 - 0x70)));
        w.rel32To(i.target);
      } else if (i.kind == DisplacedKind::Branch && b0 == 0x0f && b1 >= 0x80 && b1 <= 0x8f) {
        w.byte(0x0f);
        w.byte(b1);
        w.rel32To(i.target);
      } else {
        *error = "`" + i.text + "` at " + hex(i.address) + ": not an encoding sonde relocates";
        return std::nullopt;
      }
      break;
    }
    }
  }
  if (!transferred) {
    w.byte(0xe9);
    w.rel32To(plan.pc + plan.length);
  }
  if (push) {
    uint32_t data = w.size();
    int32_t disp = static_cast<int32_t>(data - (*push + 4));
    for (int k = 0; k < 4; ++k)
      out.code[*push + k] = static_cast<uint8_t>(static_cast<uint32_t>(disp) >> (8 * k));
    out.code.insert(out.code.end(), 8, 0);
    out.fixups.push_back({data, CodeFixupKind::Abs64, 0, returnAddress});
  }
  return out;
}

} // namespace sonde::codegen
