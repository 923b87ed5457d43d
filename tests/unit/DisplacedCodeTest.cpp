// relocateDisplaced: the code a stock site's stub runs, byte for byte, for
// plans as StockSiteAnalysis makes them (one per relocation kind).
#include "codegen/DisplacedCode.h"

#include <gtest/gtest.h>

#include <cstring>

namespace sonde::codegen {
namespace {

constexpr uint64_t kPc = 0x401000;

// A plan over `bytes` at kPc, one instruction per entry of `shape`.
StockSitePlan planOf(std::vector<uint8_t> bytes, std::vector<DisplacedInstruction> shape) {
  StockSitePlan p;
  p.pc = kPc;
  p.length = static_cast<uint32_t>(bytes.size());
  p.bytes = std::move(bytes);
  uint64_t at = kPc;
  for (DisplacedInstruction &i : shape) {
    i.address = at;
    at += i.size;
    p.endsInTransfer = p.endsInTransfer || i.kind == DisplacedKind::Return ||
                       i.kind == DisplacedKind::Call ||
                       (i.kind == DisplacedKind::Branch && !i.conditional);
  }
  p.instructions = std::move(shape);
  return p;
}

DisplacedInstruction inst(DisplacedKind kind, uint32_t size, uint64_t target = 0,
                          bool conditional = false) {
  DisplacedInstruction i;
  i.kind = kind;
  i.size = size;
  i.target = target;
  i.conditional = conditional;
  return i;
}
DisplacedInstruction copy(uint32_t size) { return inst(DisplacedKind::Copy, size); }
DisplacedInstruction ripRelative(uint32_t size, uint32_t dispOffset, uint64_t target) {
  DisplacedInstruction i = inst(DisplacedKind::RipRelative, size, target);
  i.dispOffset = dispOffset;
  i.dispSize = 4;
  return i;
}

DisplacedCode relocated(const StockSitePlan &plan) {
  std::string error;
  std::optional<DisplacedCode> code = relocateDisplaced(plan, &error);
  EXPECT_TRUE(code) << error;
  return code ? *code : DisplacedCode{};
}

TEST(DisplacedCode, CopiesDropTheNopAndJumpBack) {
  // nop; mov %rdi,%rax; add $1,%rax
  StockSitePlan plan =
      planOf({0x90, 0x48, 0x89, 0xf8, 0x48, 0x83, 0xc0, 0x01}, {copy(1), copy(3), copy(4)});
  DisplacedCode c = relocated(plan);
  EXPECT_EQ(c.length, 8u);
  EXPECT_EQ(c.original, plan.bytes);
  std::vector<uint8_t> want{0x48, 0x89, 0xf8, 0x48, 0x83, 0xc0, 0x01, 0xe9, 0, 0, 0, 0};
  EXPECT_EQ(c.code, want);
  ASSERT_EQ(c.fixups.size(), 1u);
  EXPECT_EQ(c.fixups[0].kind, CodeFixupKind::Rel32);
  EXPECT_EQ(c.fixups[0].offset, 8u);
  EXPECT_EQ(c.fixups[0].end, 12u);
  EXPECT_EQ(c.fixups[0].target, kPc + 8);
  ASSERT_EQ(c.boundaries.size(), 2u);
  EXPECT_EQ(c.boundaries[0].regionOffset, 1u);
  EXPECT_EQ(c.boundaries[0].codeOffset, 0u);
  EXPECT_EQ(c.boundaries[1].regionOffset, 4u);
  EXPECT_EQ(c.boundaries[1].codeOffset, 3u);
}

TEST(DisplacedCode, RipRelativeOperandIsFixedUpRelativeToItsInstructionEnd) {
  // nop; movl $0x11223344, X(%rip): c7 05 disp32 imm32 (the field is not last)
  DisplacedInstruction store = ripRelative(10, 2, 0x601000);
  StockSitePlan plan =
      planOf({0x90, 0xc7, 0x05, 1, 2, 3, 4, 0x44, 0x33, 0x22, 0x11}, {copy(1), store});
  DisplacedCode c = relocated(plan);
  ASSERT_EQ(c.fixups.size(), 2u);
  EXPECT_EQ(c.fixups[0].offset, 2u);
  EXPECT_EQ(c.fixups[0].end, 10u);
  EXPECT_EQ(c.fixups[0].target, 0x601000u);
  EXPECT_EQ(c.code[6], 0x44); // the immediate is kept
  EXPECT_EQ(c.fixups[1].target, kPc + 11);
}

TEST(DisplacedCode, ShortConditionalBranchIsWidened) {
  // nop; test %edi,%edi; jne rel8 -> 0f 85 rel32, then the jump back
  DisplacedInstruction jne = inst(DisplacedKind::Branch, 2, 0x401040, true);
  StockSitePlan plan = planOf({0x90, 0x85, 0xff, 0x75, 0x3b}, {copy(1), copy(2), jne});
  DisplacedCode c = relocated(plan);
  std::vector<uint8_t> want{0x85, 0xff, 0x0f, 0x85, 0, 0, 0, 0, 0xe9, 0, 0, 0, 0};
  EXPECT_EQ(c.code, want);
  ASSERT_EQ(c.fixups.size(), 2u);
  EXPECT_EQ(c.fixups[0].offset, 4u);
  EXPECT_EQ(c.fixups[0].end, 8u);
  EXPECT_EQ(c.fixups[0].target, 0x401040u);
  EXPECT_EQ(c.fixups[1].target, kPc + 5);
}

TEST(DisplacedCode, NearConditionalBranchKeepsItsCondition) {
  // nop; jle rel32 (0f 8e), hinted (3e)
  DisplacedInstruction jle = inst(DisplacedKind::Branch, 7, 0x402000, true);
  StockSitePlan plan = planOf({0x90, 0x3e, 0x0f, 0x8e, 1, 2, 3, 4}, {copy(1), jle});
  DisplacedCode c = relocated(plan);
  EXPECT_EQ(c.code[0], 0x0f);
  EXPECT_EQ(c.code[1], 0x8e);
  EXPECT_EQ(c.code.size(), 11u); // jle rel32 + jmp back
}

TEST(DisplacedCode, JumpEndsTheCodeWithoutAJumpBack) {
  // nop; jmp rel8; then bytes never run
  DisplacedInstruction jmp = inst(DisplacedKind::Branch, 2, 0x400ff0);
  StockSitePlan plan = planOf({0x90, 0xeb, 0xed, 0x48, 0x89, 0xf8}, {copy(1), jmp, copy(3)});
  DisplacedCode c = relocated(plan);
  std::vector<uint8_t> want{0xe9, 0, 0, 0, 0};
  EXPECT_EQ(c.code, want);
  ASSERT_EQ(c.fixups.size(), 1u);
  EXPECT_EQ(c.fixups[0].target, 0x400ff0u);
  EXPECT_EQ(c.boundaries.size(), 1u); // the mov after the jmp never runs
}

TEST(DisplacedCode, ReturnIsCopied) {
  StockSitePlan plan =
      planOf({0x90, 0x48, 0x89, 0xf8, 0xc3}, {copy(1), copy(3), inst(DisplacedKind::Return, 1)});
  DisplacedCode c = relocated(plan);
  std::vector<uint8_t> want{0x48, 0x89, 0xf8, 0xc3};
  EXPECT_EQ(c.code, want);
  EXPECT_TRUE(c.fixups.empty());
}

TEST(DisplacedCode, CallPushesTheOriginalReturnAddress) {
  // nop; call rel32 -> push [rip+d] (the qword after the code); jmp callee
  DisplacedInstruction call = inst(DisplacedKind::Call, 5, 0x405000);
  StockSitePlan plan = planOf({0x90, 0xe8, 1, 2, 3, 4}, {copy(1), call});
  DisplacedCode c = relocated(plan);
  ASSERT_EQ(c.code.size(), 6u + 5u + 8u);
  EXPECT_EQ(c.code[0], 0xff);
  EXPECT_EQ(c.code[1], 0x35);
  int32_t disp;
  std::memcpy(&disp, &c.code[2], 4);
  EXPECT_EQ(disp, 5); // from the end of the push (6) over the jmp (5) to the qword (11)
  EXPECT_EQ(c.code[6], 0xe9);
  ASSERT_EQ(c.fixups.size(), 2u);
  EXPECT_EQ(c.fixups[0].kind, CodeFixupKind::Rel32);
  EXPECT_EQ(c.fixups[0].target, 0x405000u);
  EXPECT_EQ(c.fixups[1].kind, CodeFixupKind::Abs64);
  EXPECT_EQ(c.fixups[1].offset, 11u);
  EXPECT_EQ(c.fixups[1].target, kPc + 6);
}

TEST(DisplacedCode, UnexpectedEncodingsAreRefused) {
  std::string error;
  // A "branch" whose bytes are no jmp/jcc (an indirect jmp through a register).
  DisplacedInstruction odd = inst(DisplacedKind::Branch, 2, 0x401000);
  EXPECT_FALSE(relocateDisplaced(
      planOf({0x90, 0xff, 0xe0, 0x90, 0x90}, {copy(1), odd, copy(1), copy(1)}), &error));
  EXPECT_NE(error.find("not an encoding sonde relocates"), std::string::npos) << error;
  // A call through a register.
  DisplacedInstruction callReg = inst(DisplacedKind::Call, 2);
  EXPECT_FALSE(relocateDisplaced(
      planOf({0x90, 0x90, 0x90, 0xff, 0xd0}, {copy(1), copy(1), copy(1), callReg}), &error));
  // A disp32 field that does not fit its instruction.
  DisplacedInstruction bad = ripRelative(4, 2, 0x601000);
  EXPECT_FALSE(relocateDisplaced(planOf({0x90, 0x8b, 0x05, 0, 0}, {copy(1), bad}), &error));
  // Bytes missing.
  StockSitePlan missing =
      planOf({0x90, 0x90, 0x90, 0x90, 0x90}, {copy(1), copy(1), copy(1), copy(1), copy(1)});
  missing.bytes.pop_back();
  EXPECT_FALSE(relocateDisplaced(missing, &error));
}

} // namespace
} // namespace sonde::codegen
