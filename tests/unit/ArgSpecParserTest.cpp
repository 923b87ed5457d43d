// ArgSpecParser over real SDT argument specs: those in this machine's libstdc++ and
// libpython3.11 notes and those GCC 12 and clang 19 emitted for a sys/sdt.h test
// program at -O0..-O3, PIE and non-PIE (readelf -n), plus malformed ones.
#include "probes/marker/ArgSpecParser.h"

#include <gtest/gtest.h>

#include <string>

using namespace sonde::probes::marker;

namespace {

std::string describeRegister(const X86Register &r) {
  return std::string(r.name) + "#" + std::to_string(r.dwarfNumber) + "/" +
         std::to_string(r.encoding) + "w" + std::to_string(r.width) + (r.high8 ? "h" : "");
}

// A canonical text for an ArgSpec, so each table row states the whole result.
std::string describe(const ArgSpec &spec) {
  std::string out = (spec.isSigned ? "s" : "u") + std::to_string(spec.size) + " ";
  if (const auto *reg = std::get_if<RegisterOperand>(&spec.operand))
    return out + "reg " + describeRegister(reg->reg);
  if (const auto *imm = std::get_if<ImmediateOperand>(&spec.operand))
    return out + "imm " + std::to_string(imm->value) +
           (imm->symbol.empty() ? "" : " sym=" + imm->symbol);
  const auto &mem = std::get<MemoryOperand>(spec.operand);
  out += "mem disp=" + std::to_string(mem.displacement);
  if (!mem.symbol.empty())
    out += " sym=" + mem.symbol;
  if (mem.base)
    out += " base=" + describeRegister(*mem.base);
  if (mem.index)
    out += " index=" + describeRegister(*mem.index) + "*" + std::to_string(mem.scale);
  if (mem.ripRelative)
    out += " rip";
  return out;
}

struct Row {
  const char *spec;
  const char *expected;
};

// Every spec below was copied from `readelf -n` output on this machine.
const Row kRealSpecs[] = {
    // libstdc++.so.6 (libstdcxx:throw/rethrow/catch)
    {"8@%rdi", "u8 reg rdi#5/7w8"},
    {"8@%rsi", "u8 reg rsi#4/6w8"},
    {"8@%rdx", "u8 reg rdx#1/2w8"},
    {"8@%rax", "u8 reg rax#0/0w8"},
    {"8@-80(%rbx)", "u8 mem disp=-80 base=rbx#3/3w8"},
    // libpython3.11.so.1.0 (python:function__entry, gc__start, line, ...)
    {"8@%rbp", "u8 reg rbp#6/5w8"},
    {"8@%r12", "u8 reg r12#12/12w8"},
    {"8@%r14", "u8 reg r14#14/14w8"},
    {"8@%rbx", "u8 reg rbx#3/3w8"},
    {"-4@%eax", "s4 reg eax#0/0w4"},
    {"-4@%edx", "s4 reg edx#1/2w4"},
    {"-8@%rbx", "s8 reg rbx#3/3w8"},
    {"-4@112(%rsp)", "s4 mem disp=112 base=rsp#7/4w8"},
    // gcc -O0
    {"-1@-52(%rbp)", "s1 mem disp=-52 base=rbp#6/5w8"},
    {"1@-56(%rbp)", "u1 mem disp=-56 base=rbp#6/5w8"},
    {"-2@-60(%rbp)", "s2 mem disp=-60 base=rbp#6/5w8"},
    {"2@-64(%rbp)", "u2 mem disp=-64 base=rbp#6/5w8"},
    {"-8@16(%rbp)", "s8 mem disp=16 base=rbp#6/5w8"},
    {"-1@%al", "s1 reg al#0/0w1"},
    {"1@%dl", "u1 reg dl#1/2w1"},
    {"-2@%cx", "s2 reg cx#2/1w2"},
    {"2@%si", "u2 reg si#4/6w2"},
    {"-4@%edi", "s4 reg edi#5/7w4"},
    {"-8@%rcx", "s8 reg rcx#2/1w8"},
    {"8@%rcx", "u8 reg rcx#2/1w8"},
    {"-4@$42", "s4 imm 42"},
    {"-4@$-1", "s4 imm -1"},
    {"-8@$9223372036854775807", "s8 imm 9223372036854775807"},
    {"-1@$7", "s1 imm 7"},
    // gcc -O2, PIE and non-PIE
    {"-1@%dil", "s1 reg dil#5/7w1"},
    {"1@%sil", "u1 reg sil#4/6w1"},
    {"-2@%r11w", "s2 reg r11w#11/11w2"},
    {"2@%cx", "u2 reg cx#2/1w2"},
    {"-4@%r8d", "s4 reg r8d#8/8w4"},
    {"4@%r9d", "u4 reg r9d#9/9w4"},
    {"1@%r10b", "u1 reg r10b#10/10w1"},
    {"-1@%r8b", "s1 reg r8b#8/8w1"},
    {"-4@%r12d", "s4 reg r12d#12/12w4"},
    {"8@%r13", "u8 reg r13#13/13w8"},
    {"-1@gc(%rip)", "s1 mem disp=0 sym=gc base=rip#16/-1w8 rip"},
    {"1@guc(%rip)", "u1 mem disp=0 sym=guc base=rip#16/-1w8 rip"},
    {"-2@gs(%rip)", "s2 mem disp=0 sym=gs base=rip#16/-1w8 rip"},
    {"-4@gi(%rip)", "s4 mem disp=0 sym=gi base=rip#16/-1w8 rip"},
    {"8@gstr(%rip)", "u8 mem disp=0 sym=gstr base=rip#16/-1w8 rip"},
    {"-8@24(%r13)", "s8 mem disp=24 base=r13#13/13w8"},
    {"-8@8+gS(%rip)", "s8 mem disp=8 sym=gS base=rip#16/-1w8 rip"},
    {"-8@gS+8(%rip)", "s8 mem disp=8 sym=gS base=rip#16/-1w8 rip"},
    {"-8@(%rdx,%rsi,8)", "s8 mem disp=0 base=rdx#1/2w8 index=rsi#4/6w8*8"},
    {"-4@(%r14,%rsi,4)", "s4 mem disp=0 base=r14#14/14w8 index=rsi#4/6w8*4"},
    {"-8@0(%r13,%rsi,8)", "s8 mem disp=0 base=r13#13/13w8 index=rsi#4/6w8*8"},
    {"-4@gia(,%rsi,4)", "s4 mem disp=0 sym=gia index=rsi#4/6w8*4"},
    {"-4@-36(%rsp)", "s4 mem disp=-36 base=rsp#7/4w8"},
    // clang -O0..-O3
    {"-1@-81(%rbp)", "s1 mem disp=-81 base=rbp#6/5w8"},
    {"4@-96(%rbp)", "u4 mem disp=-96 base=rbp#6/5w8"},
    {"-8@-104(%rbp)", "s8 mem disp=-104 base=rbp#6/5w8"},
    {"8@-282(%rbp)", "u8 mem disp=-282 base=rbp#6/5w8"},
    {"-1@-117(%rsp)", "s1 mem disp=-117 base=rsp#7/4w8"},
    {"-8@56(%rsp)", "s8 mem disp=56 base=rsp#7/4w8"},
    {"-8@(%rsp)", "s8 mem disp=0 base=rsp#7/4w8"},
};

// Forms the brief and sys/sdt.h allow that the programs above did not happen to emit.
const Row kOtherForms[] = {
    {"8@%r8", "u8 reg r8#8/8w8"},
    {"2@%r8w", "u2 reg r8w#8/8w2"},
    {"-2@%ax", "s2 reg ax#0/0w2"},
    {"1@%bpl", "u1 reg bpl#6/5w1"},
    {"1@%spl", "u1 reg spl#7/4w1"},
    {"1@%ah", "u1 reg ah#0/0w1h"},
    {"-1@%bh", "s1 reg bh#3/3w1h"},
    {"8@-16(%rbp)", "u8 mem disp=-16 base=rbp#6/5w8"},
    {"4@$42", "u4 imm 42"},
    {"8@$0x10", "u8 imm 16"},
    {"8@$18446744073709551615", "u8 imm -1"},
    {"8@$-9223372036854775808", "u8 imm -9223372036854775808"},
    {"8@$foo+8", "u8 imm 8 sym=foo"},
    {"-8@foo(%rip)", "s8 mem disp=0 sym=foo base=rip#16/-1w8 rip"},
    {"8@foo+8(%rip)", "u8 mem disp=8 sym=foo base=rip#16/-1w8 rip"},
    {"8@foo-8(%rip)", "u8 mem disp=-8 sym=foo base=rip#16/-1w8 rip"},
    {"8@.LC0(%rip)", "u8 mem disp=0 sym=.LC0 base=rip#16/-1w8 rip"},
    {"8@8(%rax,%rbx,4)", "u8 mem disp=8 base=rax#0/0w8 index=rbx#3/3w8*4"},
    {"8@(%rax,%rbx)", "u8 mem disp=0 base=rax#0/0w8 index=rbx#3/3w8*1"},
    {"4@(%eax)", "u4 mem disp=0 base=eax#0/0w4"},
    {"8@foo", "u8 mem disp=0 sym=foo"},
    {"%rdi", "s8 reg rdi#5/7w8"}, // the old size-less form
};

class RealSpecTest : public testing::TestWithParam<Row> {};

TEST_P(RealSpecTest, ParsesToTheExpectedOperand) {
  std::string error;
  std::optional<ArgSpec> spec = ArgSpecParser::parse(GetParam().spec, error);
  ASSERT_TRUE(spec) << error;
  EXPECT_EQ(describe(*spec), GetParam().expected);
  EXPECT_EQ(spec->text, GetParam().spec);
}

INSTANTIATE_TEST_SUITE_P(Real, RealSpecTest, testing::ValuesIn(kRealSpecs));
INSTANTIATE_TEST_SUITE_P(OtherForms, RealSpecTest, testing::ValuesIn(kOtherForms));

TEST(ArgSpecParserTest, TheTableHoldsAtLeastFortyRealSpecs) {
  EXPECT_GE(std::size(kRealSpecs), 40u);
}

TEST(ArgSpecParserTest, SizeLessSpecIsMarked) {
  std::string error;
  EXPECT_FALSE(ArgSpecParser::parse("%rdi", error)->sizeGiven);
  EXPECT_TRUE(ArgSpecParser::parse("8@%rdi", error)->sizeGiven);
}

TEST(ArgSpecParserTest, ParsesAWholeNoteArgumentString) {
  std::string error;
  // python:function__entry in libpython3.11.
  auto specs = ArgSpecParser::parseList("8@%rbp 8@%r12 -4@%eax", error);
  ASSERT_TRUE(specs) << error;
  ASSERT_EQ(specs->size(), 3u);
  EXPECT_EQ(describe((*specs)[0]), "u8 reg rbp#6/5w8");
  EXPECT_EQ(describe((*specs)[2]), "s4 reg eax#0/0w4");

  // gcc -O2 t:many, twelve arguments.
  specs = ArgSpecParser::parseList("-1@%dil 1@%r10b -2@%r11w 2@%cx -4@%r8d 4@%r9d -8@%rax "
                                   "8@%rbx 8@%rbp 8@%rdx -4@%r12d -4@-36(%rsp)",
                                   error);
  ASSERT_TRUE(specs) << error;
  ASSERT_EQ(specs->size(), 12u);
  EXPECT_EQ(describe((*specs)[11]), "s4 mem disp=-36 base=rsp#7/4w8");
}

TEST(ArgSpecParserTest, EmptyArgumentStringMeansNoArguments) {
  std::string error;
  auto specs = ArgSpecParser::parseList("", error);
  ASSERT_TRUE(specs);
  EXPECT_TRUE(specs->empty());
  specs = ArgSpecParser::parseList("  ", error);
  ASSERT_TRUE(specs);
  EXPECT_TRUE(specs->empty());
}

TEST(ArgSpecParserTest, ListErrorNamesTheBadSpec) {
  std::string error;
  EXPECT_FALSE(ArgSpecParser::parseList("8@%rdi 8@%rxx -4@%eax", error));
  EXPECT_EQ(error, "bad marker argument spec '8@%rxx': unknown register '%rxx'");
}

struct BadRow {
  const char *spec;
  const char *why;
};

const BadRow kMalformed[] = {
    {"", "empty spec"},
    {"3@%eax", "size '3' is not one of 1, 2, 4, 8 (or negated)"},
    {"16@%rax", "size '16' is not one of 1, 2, 4, 8 (or negated)"},
    {"x@%rax", "size 'x' is not one of 1, 2, 4, 8 (or negated)"},
    {"--4@%eax", "size '--4' is not one of 1, 2, 4, 8 (or negated)"},
    {"8@", "missing operand after '@'"},
    {"8@%", "missing register name after '%'"},
    {"8@%xmm0", "unknown register '%xmm0'"},
    {"8@%RAX", "unknown register '%RAX'"},
    {"8@%rip", "%rip is only valid as a memory base"},
    {"8@$", "missing number or symbol at the end"},
    {"8@$%eax", "unexpected '%'"},
    {"8@$99999999999999999999", "number out of range"},
    {"8@$-9223372036854775809", "number out of range"},
    {"8@-16(%rbp", "expected ')' in the memory operand"},
    {"8@-16(%bp)", "base register '%bp' is not an address register"},
    {"8@(%rax,%rsp,2)", "'%rsp' cannot be an index register"},
    {"8@(%rax,%rbx,3)", "scale must be 1, 2, 4 or 8"},
    {"8@(%rax,rbx)", "expected an index register after ','"},
    {"8@foo(%rip,%rax)", "a %rip-relative operand cannot have an index"},
    {"8@()", "memory operand without a base or index register"},
    {"8@foo+bar(%rip)", "more than one symbol in the displacement"},
    {"8@8-foo(%rip)", "a symbol cannot be subtracted"},
    {"8@foo+-8(%rip)", "unexpected '-'"},
    {"8@%eax)", "unexpected ')' after the operand"},
    {"8@-16(%rbp)x", "unexpected 'x' after the operand"},
    {"8@fs:8", "unexpected ':8' after the operand"},
};

class MalformedSpecTest : public testing::TestWithParam<BadRow> {};

TEST_P(MalformedSpecTest, FailsNamingTheSpec) {
  std::string error;
  EXPECT_FALSE(ArgSpecParser::parse(GetParam().spec, error));
  EXPECT_EQ(error,
            std::string("bad marker argument spec '") + GetParam().spec + "': " + GetParam().why);
}

INSTANTIATE_TEST_SUITE_P(Malformed, MalformedSpecTest, testing::ValuesIn(kMalformed));

} // namespace
