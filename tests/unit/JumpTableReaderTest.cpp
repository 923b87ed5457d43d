// readJumpTable over tests/unit/fixtures/jump_tables.S (position-dependent):
// each jt_CASE_jump is an indirect jump whose table is read exactly, or
// refused with the reason checked.
#include "codegen/JumpTableReader.h"
#include "probes/marker/ElfSymbols.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

namespace sonde::codegen {
namespace {

const char *const kCases[] = {"rel_mem",        "rel_reg",       "abs_jmp",        "join",
                              "join_unbounded", "no_bound",      "bound_32_of_64", "signed",
                              "index_changed",  "store_between", "call_between",   "writable",
                              "plain_load"};

class JumpTableReaderTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    std::set<std::string> names{"jt_rel_reg",    "jt_rel_mem_c0", "jt_rel_mem_c1", "jt_rel_mem_c2",
                                "jt_rel_reg_c0", "jt_rel_reg_c1", "jt_abs_jmp_c0", "jt_abs_jmp_c1",
                                "jt_join_c0",    "jt_join_c1"};
    for (const char *c : kCases)
      names.insert(std::string("jt_") + c + "_jump");
    std::string error;
    auto found = probes::marker::ElfSymbols::addresses(JUMP_TABLES, names, error);
    ASSERT_TRUE(found) << error;
    ASSERT_EQ(found->size(), names.size());
    symbols_ = new std::map<std::string, uint64_t>(*found);
  }
  static void TearDownTestSuite() { delete symbols_; }

  static uint64_t at(const std::string &name) { return symbols_->at(name); }
  static std::optional<JumpTable> read(const std::string &name, std::string &why) {
    return readJumpTableAt(JUMP_TABLES, at("jt_" + name + "_jump"), why);
  }
  static void expectRefused(const std::string &name, const std::string &reason) {
    std::string why;
    std::optional<JumpTable> t = read(name, why);
    EXPECT_FALSE(t) << name;
    EXPECT_NE(why.find(reason), std::string::npos) << name << ": " << why;
  }

  static std::map<std::string, uint64_t> *symbols_;
};

std::map<std::string, uint64_t> *JumpTableReaderTest::symbols_ = nullptr;

TEST_F(JumpTableReaderTest, RelativeTableBoundOnMemory) {
  std::string why;
  std::optional<JumpTable> t = read("rel_mem", why);
  ASSERT_TRUE(t) << why;
  EXPECT_EQ(t->jump, at("jt_rel_mem_jump"));
  EXPECT_EQ(t->entries, 3u); // cmpl $2; ja
  EXPECT_EQ(t->targets,
            (std::vector<uint64_t>{at("jt_rel_mem_c0"), at("jt_rel_mem_c1"), at("jt_rel_mem_c2")}));
  ASSERT_EQ(t->tables.size(), 1u);
  EXPECT_TRUE(t->joins.empty());
  ASSERT_FALSE(t->guarded.empty());
  EXPECT_EQ(t->guarded.front().end, at("jt_rel_mem_jump") + 2); // through the jmp *%rax
}

TEST_F(JumpTableReaderTest, RelativeTableBoundOnARegisterWithTheBaseLoadedFirst) {
  std::string why;
  std::optional<JumpTable> t = read("rel_reg", why);
  ASSERT_TRUE(t) << why;
  EXPECT_EQ(t->entries, 2u);
  EXPECT_EQ(t->targets, (std::vector<uint64_t>{at("jt_rel_reg_c0"), at("jt_rel_reg_c1")}));
  // The lea before the bound: guarded from the instruction after it.
  EXPECT_EQ(t->guarded.front().start, at("jt_rel_reg") + 7);
}

TEST_F(JumpTableReaderTest, AbsoluteTableInAPositionDependentObject) {
  std::string why;
  std::optional<JumpTable> t = read("abs_jmp", why);
  ASSERT_TRUE(t) << why;
  EXPECT_EQ(t->entries, 2u);
  EXPECT_EQ(t->targets, (std::vector<uint64_t>{at("jt_abs_jmp_c0"), at("jt_abs_jmp_c1")}));
}

TEST_F(JumpTableReaderTest, JoinedComputedGotoFollowsEveryBranchToTheTail) {
  std::string why;
  std::optional<JumpTable> t = read("join", why);
  ASSERT_TRUE(t) << why;
  EXPECT_EQ(t->entries, 512u); // two loads of the 256-entry table
  EXPECT_EQ(t->targets, (std::vector<uint64_t>{at("jt_join_c0"), at("jt_join_c1")}));
  ASSERT_EQ(t->joins.size(), 1u);
  EXPECT_EQ(t->joins[0], at("jt_join_jump") - 3); // mov %rbx,%rbp
}

TEST_F(JumpTableReaderTest, PatternsNotUnderstoodAreRefused) {
  expectRefused("join_unbounded", "not a `TABLE(,%reg,8)` load");
  expectRefused("no_bound", "no bound check of the index");
  expectRefused("bound_32_of_64", "is not an unsigned bound check of the index");
  expectRefused("signed", "is not an unsigned bound check of the index");
  expectRefused("index_changed", "is not a bound this reader knows");
  expectRefused("store_between", "may change the index's memory");
  expectRefused("call_between", "is between the jump and its index's bound");
  expectRefused("writable", "is not in a read-only section");
  expectRefused("plain_load", "not a `TABLE(,%reg,8)` load");
}

} // namespace
} // namespace sonde::codegen
