// StockSiteAnalysis over tests/unit/fixtures/stock_sites.S: each site_CASE
// symbol is a NOP whose plan or refusal is checked exactly.
#include "codegen/StockSiteAnalysis.h"
#include "probes/marker/ElfSymbols.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <set>
#include <string>

namespace sonde::codegen {
namespace {

class StockSiteAnalysisTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    std::set<std::string> names{"rip_data",        "jcc_dest",     "jmp_dest",  "plain",
                                "mid_instruction", "inner_symbol", "short_dest"};
    for (const char *c : {"plain",
                          "rip_load",
                          "rip_store_imm",
                          "jcc_short",
                          "jmp_ends",
                          "jmp_short_then_more",
                          "ret_ends",
                          "branch_inside",
                          "branch_from_cold",
                          "indirect",
                          "call_in",
                          "syscall_in",
                          "int3_in",
                          "ud2_in",
                          "endbr_in",
                          "loop_in",
                          "unknown_in",
                          "undecodable_after",
                          "past_end",
                          "symbol_in",
                          "not_nop",
                          "landing_pad",
                          "bad_lsda",
                          "no_function",
                          "int1_in",
                          "eip_in",
                          "call_after_mov",
                          "call_indirect_in",
                          "call_rip_in",
                          "call_prefixed_in",
                          "call_into_region",
                          "pad_after_ret",
                          "pad_after_jmp",
                          "pad_not_padding",
                          "pad_next_function",
                          "pad_symbol",
                          "pad_branch_target",
                          "jt_site",
                          "jt_into_region",
                          "jt_guard_entered",
                          "jt_abs_in_pie",
                          "jt_guard_mid_instruction"})
      names.insert(std::string("site_") + c);
    std::string error;
    auto found = probes::marker::ElfSymbols::addresses(STOCK_SITES, names, error);
    ASSERT_TRUE(found) << error;
    ASSERT_EQ(found->size(), names.size());
    symbols_ = new std::map<std::string, uint64_t>(*found);
    analysis_ = new StockSiteAnalysis(STOCK_SITES);
  }
  static void TearDownTestSuite() {
    delete analysis_;
    delete symbols_;
  }

  static uint64_t at(const std::string &name) { return symbols_->at(name); }
  static StockSiteDecision site(const std::string &name) {
    return analysis_->analyse(at("site_" + name));
  }
  static void expectRefused(const std::string &name, StockSiteRefusal why) {
    StockSiteDecision d = site(name);
    EXPECT_FALSE(d.plan) << name;
    EXPECT_EQ(d.refusal, why) << name << ": " << refusalName(d.refusal) << ": " << d.reason;
    EXPECT_FALSE(d.reason.empty()) << name;
  }

  static std::map<std::string, uint64_t> *symbols_;
  static StockSiteAnalysis *analysis_;
};

std::map<std::string, uint64_t> *StockSiteAnalysisTest::symbols_ = nullptr;
StockSiteAnalysis *StockSiteAnalysisTest::analysis_ = nullptr;

TEST_F(StockSiteAnalysisTest, PlainInstructionsAreCopied) {
  StockSiteDecision d = site("plain");
  ASSERT_TRUE(d.plan) << d.reason;
  EXPECT_EQ(d.plan->pc, at("site_plain"));
  EXPECT_EQ(d.plan->length, 8u); // nop, mov %rdi,%rax (3), add $1,%rax (4)
  ASSERT_EQ(d.plan->instructions.size(), 3u);
  for (const DisplacedInstruction &i : d.plan->instructions)
    EXPECT_EQ(i.kind, DisplacedKind::Copy) << i.text;
  EXPECT_EQ(d.plan->instructions[1].address, at("site_plain") + 1);
  EXPECT_EQ(d.plan->instructions[2].size, 4u);
  EXPECT_FALSE(d.plan->endsInTransfer);
  EXPECT_EQ(d.functionStart, at("plain"));
}

TEST_F(StockSiteAnalysisTest, RipRelativeLoadHasItsDisplacementAndTarget) {
  StockSiteDecision d = site("rip_load");
  ASSERT_TRUE(d.plan) << d.reason;
  EXPECT_EQ(d.plan->length, 8u); // nop, movq rip_data(%rip),%rax (48 8b 05 disp32)
  ASSERT_EQ(d.plan->instructions.size(), 2u);
  const DisplacedInstruction &load = d.plan->instructions[1];
  EXPECT_EQ(load.kind, DisplacedKind::RipRelative);
  EXPECT_EQ(load.dispOffset, 3u);
  EXPECT_EQ(load.dispSize, 4u);
  EXPECT_EQ(load.target, at("rip_data"));
}

TEST_F(StockSiteAnalysisTest, RipRelativeFieldFoundBeforeAnImmediate) {
  StockSiteDecision d = site("rip_store_imm");
  ASSERT_TRUE(d.plan) << d.reason;
  // movl $imm32, disp32(%rip): c7 05 disp32 imm32.
  const DisplacedInstruction &store = d.plan->instructions[1];
  EXPECT_EQ(store.size, 10u);
  EXPECT_EQ(store.kind, DisplacedKind::RipRelative);
  EXPECT_EQ(store.dispOffset, 2u);
  EXPECT_EQ(store.target, at("rip_data"));
}

TEST_F(StockSiteAnalysisTest, ConditionalBranchIsRetargeted) {
  StockSiteDecision d = site("jcc_short");
  ASSERT_TRUE(d.plan) << d.reason;
  EXPECT_EQ(d.plan->length, 5u); // nop, test (2), jne rel8 (2)
  ASSERT_EQ(d.plan->instructions.size(), 3u);
  const DisplacedInstruction &jcc = d.plan->instructions[2];
  EXPECT_EQ(jcc.kind, DisplacedKind::Branch);
  EXPECT_TRUE(jcc.conditional);
  EXPECT_EQ(jcc.size, 2u);
  EXPECT_EQ(jcc.target, at("jcc_dest"));
  char text[32];
  std::snprintf(text, sizeof text, "jne 0x%llx", (unsigned long long)at("jcc_dest"));
  EXPECT_EQ(jcc.text, text);
  EXPECT_FALSE(d.plan->endsInTransfer);
}

TEST_F(StockSiteAnalysisTest, JumpEndsTheRegion) {
  StockSiteDecision d = site("jmp_ends");
  ASSERT_TRUE(d.plan) << d.reason;
  EXPECT_EQ(d.plan->length, 6u); // nop, jmp rel32; the ud2 after it stays
  ASSERT_EQ(d.plan->instructions.size(), 2u);
  EXPECT_EQ(d.plan->instructions[1].kind, DisplacedKind::Branch);
  EXPECT_FALSE(d.plan->instructions[1].conditional);
  EXPECT_EQ(d.plan->instructions[1].target, at("jmp_dest"));
  EXPECT_TRUE(d.plan->endsInTransfer);
}

TEST_F(StockSiteAnalysisTest, ShortJumpTakesTheBytesAfterItAlong) {
  StockSiteDecision d = site("jmp_short_then_more");
  ASSERT_TRUE(d.plan) << d.reason;
  EXPECT_EQ(d.plan->length, 6u); // nop, jmp rel8 (2), mov %rdi,%rax (3)
  ASSERT_EQ(d.plan->instructions.size(), 3u);
  EXPECT_EQ(d.plan->instructions[1].kind, DisplacedKind::Branch);
  EXPECT_EQ(d.plan->instructions[1].size, 2u);
  EXPECT_EQ(d.plan->instructions[1].target, at("short_dest"));
  EXPECT_EQ(d.plan->instructions[2].kind, DisplacedKind::Copy);
  EXPECT_TRUE(d.plan->endsInTransfer);
}

TEST_F(StockSiteAnalysisTest, ReturnIsCopiedAsItIs) {
  StockSiteDecision d = site("ret_ends");
  ASSERT_TRUE(d.plan) << d.reason;
  EXPECT_EQ(d.plan->length, 5u); // nop, mov %edi,%eax (2), pop %rbp, ret
  ASSERT_EQ(d.plan->instructions.size(), 4u);
  EXPECT_EQ(d.plan->instructions[1].kind, DisplacedKind::Copy);
  EXPECT_EQ(d.plan->instructions[2].kind, DisplacedKind::Copy);
  EXPECT_EQ(d.plan->instructions[3].kind, DisplacedKind::Return);
  EXPECT_TRUE(d.plan->endsInTransfer);
}

TEST_F(StockSiteAnalysisTest, DirectCallCompletesTheRegion) {
  StockSiteDecision d = site("call_in");
  ASSERT_TRUE(d.plan) << d.reason;
  EXPECT_EQ(d.plan->length, 6u); // nop, call rel32; the ret after it stays
  ASSERT_EQ(d.plan->instructions.size(), 2u);
  const DisplacedInstruction &call = d.plan->instructions[1];
  EXPECT_EQ(call.kind, DisplacedKind::Call);
  EXPECT_EQ(call.target, at("plain"));
  EXPECT_EQ(call.address + call.size, d.plan->pc + d.plan->length); // returns to the region's end
  EXPECT_FALSE(d.plan->endsInTransfer);

  d = site("call_after_mov");
  ASSERT_TRUE(d.plan) << d.reason;
  EXPECT_EQ(d.plan->length, 9u); // nop, mov %rbx,%rdi (3), call rel32 (5)
  ASSERT_EQ(d.plan->instructions.size(), 3u);
  EXPECT_EQ(d.plan->instructions[1].kind, DisplacedKind::Copy);
  EXPECT_EQ(d.plan->instructions[2].kind, DisplacedKind::Call);
  EXPECT_EQ(d.plan->instructions[2].target, at("plain"));
}

TEST_F(StockSiteAnalysisTest, OtherCallsRefuse) {
  expectRefused("call_indirect_in", StockSiteRefusal::CallInRegion);
  expectRefused("call_rip_in", StockSiteRefusal::CallInRegion);
  expectRefused("call_prefixed_in", StockSiteRefusal::CallInRegion);
  // Its destination (the call itself) is inside the region.
  expectRefused("call_into_region", StockSiteRefusal::BranchIntoRegion);
}

TEST_F(StockSiteAnalysisTest, BranchIntoTheRegionRefuses) {
  expectRefused("branch_inside", StockSiteRefusal::BranchIntoRegion);
  // From another function (as from a .cold part): found by the object-wide sweep.
  expectRefused("branch_from_cold", StockSiteRefusal::BranchIntoRegion);
}

TEST_F(StockSiteAnalysisTest, IndirectJumpInTheFunctionRefuses) {
  expectRefused("indirect", StockSiteRefusal::IndirectJump);
  EXPECT_NE(site("indirect").reason.find("indirect jump in function: `jmpq *%rax`"),
            std::string::npos);
}

TEST_F(StockSiteAnalysisTest, JumpTableReadWithItsTargetsOutsideTheRegion) {
  StockSiteDecision d = site("jt_site");
  ASSERT_TRUE(d.plan) << d.reason;
  EXPECT_EQ(d.plan->length, 8u);
}

TEST_F(StockSiteAnalysisTest, JumpTableThatCannotBeShownSafeRefuses) {
  expectRefused("jt_into_region", StockSiteRefusal::BranchIntoRegion);
  EXPECT_NE(site("jt_into_region").reason.find("a jump table of `jmpq *%rax`"), std::string::npos)
      << site("jt_into_region").reason;
  // A branch past the bound check into the table's indexing.
  expectRefused("jt_guard_entered", StockSiteRefusal::IndirectJump);
  EXPECT_NE(site("jt_guard_entered").reason.find("not on every path"), std::string::npos)
      << site("jt_guard_entered").reason;
  // ... or into the middle of one of its instructions.
  expectRefused("jt_guard_mid_instruction", StockSiteRefusal::IndirectJump);
  expectRefused("jt_abs_in_pie", StockSiteRefusal::IndirectJump);
  EXPECT_NE(site("jt_abs_in_pie").reason.find("position-independent"), std::string::npos)
      << site("jt_abs_in_pie").reason;
}

TEST_F(StockSiteAnalysisTest, InstructionsThatCannotMoveRefuse) {
  expectRefused("syscall_in", StockSiteRefusal::SystemInstructionInRegion);
  expectRefused("int3_in", StockSiteRefusal::SystemInstructionInRegion);
  expectRefused("ud2_in", StockSiteRefusal::SystemInstructionInRegion);
  // LLVM 19 does not decode int1 (icebp): refused as unknown.
  expectRefused("int1_in", StockSiteRefusal::UnknownInstructionInRegion);
  expectRefused("eip_in", StockSiteRefusal::UnknownInstructionInRegion);
  expectRefused("endbr_in", StockSiteRefusal::EndbrInRegion);
  expectRefused("loop_in", StockSiteRefusal::ShortBranchOnlyInRegion);
  expectRefused("unknown_in", StockSiteRefusal::UnknownInstructionInRegion);
}

TEST_F(StockSiteAnalysisTest, FunctionThatDoesNotDecodeRefuses) {
  expectRefused("undecodable_after", StockSiteRefusal::FunctionUndecodable);
}

TEST_F(StockSiteAnalysisTest, PaddingAfterTheFunctionsLastTransferComesAlong) {
  StockSiteDecision d = site("pad_after_ret");
  ASSERT_TRUE(d.plan) << d.reason;
  EXPECT_EQ(d.plan->length, 6u); // nop, ret | nopl 0(%rax) (4)
  ASSERT_EQ(d.plan->instructions.size(), 3u);
  EXPECT_EQ(d.plan->instructions[1].kind, DisplacedKind::Return);
  EXPECT_EQ(d.plan->instructions[2].kind, DisplacedKind::Copy);
  EXPECT_EQ(d.plan->instructions[2].address, d.functionEnd);
  EXPECT_EQ(d.plan->instructions[2].size, 4u);
  EXPECT_TRUE(d.plan->endsInTransfer);

  d = site("pad_after_jmp");
  ASSERT_TRUE(d.plan) << d.reason;
  EXPECT_EQ(d.plan->length, 5u); // nop, jmp rel8 (2) | int3, int3
  ASSERT_EQ(d.plan->instructions.size(), 4u);
  EXPECT_EQ(d.plan->instructions[1].kind, DisplacedKind::Branch);
  EXPECT_EQ(d.plan->instructions[3].text, "int3");
  EXPECT_TRUE(d.plan->endsInTransfer);
}

TEST_F(StockSiteAnalysisTest, RegionPastTheFunctionEndRefusesUnlessPaddingAfterATransfer) {
  // Falls into the padding: mov is the function's last instruction.
  expectRefused("past_end", StockSiteRefusal::RegionPastFunctionEnd);
  expectRefused("pad_not_padding", StockSiteRefusal::RegionPastFunctionEnd);
  EXPECT_NE(site("pad_not_padding").reason.find("`addq $1, %rax`"), std::string::npos)
      << site("pad_not_padding").reason;
  expectRefused("pad_next_function", StockSiteRefusal::RegionPastFunctionEnd);
  expectRefused("pad_symbol", StockSiteRefusal::SymbolInRegion);
  expectRefused("pad_branch_target", StockSiteRefusal::BranchIntoRegion);
}

TEST_F(StockSiteAnalysisTest, SymbolInsideTheRegionRefuses) {
  StockSiteDecision d = site("symbol_in");
  expectRefused("symbol_in", StockSiteRefusal::SymbolInRegion);
  char where[32];
  std::snprintf(where, sizeof where, "0x%llx", (unsigned long long)at("inner_symbol"));
  EXPECT_NE(d.reason.find(where), std::string::npos) << d.reason;
}

TEST_F(StockSiteAnalysisTest, LandingPadInsideTheRegionRefuses) {
  expectRefused("landing_pad", StockSiteRefusal::LandingPadInRegion);
  expectRefused("bad_lsda", StockSiteRefusal::UnreadableExceptionTable);
}

TEST_F(StockSiteAnalysisTest, SitesThatAreNotNopsOnInstructionBoundariesRefuse) {
  expectRefused("not_nop", StockSiteRefusal::NotANop);
  StockSiteDecision d = analysis_->analyse(at("mid_instruction") + 1); // b8 90 90 90 90
  EXPECT_FALSE(d.plan);
  EXPECT_EQ(d.refusal, StockSiteRefusal::NotAnInstructionBoundary) << d.reason;
}

TEST_F(StockSiteAnalysisTest, CodeOutsideAnyFunctionRefuses) {
  expectRefused("no_function", StockSiteRefusal::NoFunction);
  StockSiteAnalysis missing("/nonexistent/binary");
  StockSiteDecision d = missing.analyse(0x1000);
  EXPECT_FALSE(d.plan);
  EXPECT_EQ(d.refusal, StockSiteRefusal::NoFunction);
}

} // namespace
} // namespace sonde::codegen
