// KernelBtf on this machine's kernel BTF: the C arguments of sched_switch and
// how `$prev->pid`-style accesses read them.
#include "probes/tracepoint/KernelBtf.h"

#include <gtest/gtest.h>

namespace sonde::probes::tracepoint {
namespace {

ast::TargetSymbol symbol(const std::string &name, const std::vector<std::string> &members,
                         bool addressOf = false) {
  ast::TargetSymbol s;
  s.name = name;
  s.addressOf = addressOf;
  for (const std::string &m : members) {
    ast::TargetComponent c{ast::TargetComponent::Kind::Member, {}, m, nullptr};
    s.components.push_back(std::move(c));
  }
  return s;
}

class KernelBtfTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string why;
    btf_ = KernelBtf::running(&why);
    if (!btf_)
      GTEST_SKIP() << why;
  }
  std::optional<BtfAccess> resolve(const ast::TargetSymbol &s, std::string *why) {
    return btf_->resolve("sched_switch", s, why);
  }
  const KernelBtf *btf_ = nullptr;
};

TEST_F(KernelBtfTest, ArgumentsOfATracepoint) {
  auto args = btf_->arguments("sched_switch");
  ASSERT_TRUE(args);
  ASSERT_GE(args->size(), 3u);
  EXPECT_EQ((*args)[0].name, "preempt");
  EXPECT_EQ((*args)[0].type, "bool");
  EXPECT_EQ((*args)[1].name, "prev");
  EXPECT_EQ((*args)[1].type, "struct task_struct *");
  EXPECT_EQ((*args)[2].name, "next");
  EXPECT_FALSE(btf_->arguments("no_such_tracepoint"));
}

TEST_F(KernelBtfTest, ArgumentsAndMembers) {
  std::string why;
  auto preempt = resolve(symbol("$preempt", {}), &why);
  ASSERT_TRUE(preempt) << why;
  EXPECT_FALSE(preempt->readsMemory);
  EXPECT_EQ(preempt->argIndex, 0u);
  EXPECT_EQ(preempt->argSize, 1u);

  auto pid = resolve(symbol("$prev", {"pid"}), &why);
  ASSERT_TRUE(pid) << why;
  EXPECT_TRUE(pid->readsMemory);
  EXPECT_EQ(pid->argIndex, 1u);
  EXPECT_TRUE(pid->pointerHops.empty());
  EXPECT_EQ(pid->result, BtfAccess::Result::Value);
  EXPECT_EQ(pid->size, 4u);
  EXPECT_TRUE(pid->isSigned);
  EXPECT_GT(pid->finalOffset, 0u);

  auto comm = resolve(symbol("$next", {"comm"}), &why);
  ASSERT_TRUE(comm) << why;
  EXPECT_EQ(comm->argIndex, 2u);
  EXPECT_EQ(comm->result, BtfAccess::Result::String);
  EXPECT_EQ(comm->length, 16u);

  auto address = resolve(symbol("$prev", {"pid"}, true), &why);
  ASSERT_TRUE(address) << why;
  EXPECT_EQ(address->result, BtfAccess::Result::Address);
  EXPECT_EQ(address->finalOffset, pid->finalOffset);

  // A pointer member followed: one hop, at the pointer's offset.
  auto parent = resolve(symbol("$prev", {"real_parent", "pid"}), &why);
  ASSERT_TRUE(parent) << why;
  ASSERT_EQ(parent->pointerHops.size(), 1u);
  EXPECT_EQ(parent->finalOffset, pid->finalOffset);

  // An embedded struct's member: offsets add up, no hop.
  auto vruntime = resolve(symbol("$prev", {"se", "vruntime"}), &why);
  ASSERT_TRUE(vruntime) << why;
  EXPECT_TRUE(vruntime->pointerHops.empty());
  EXPECT_EQ(vruntime->size, 8u);
}

TEST_F(KernelBtfTest, WhatCannotBeReadSaysWhy) {
  std::string why;
  EXPECT_FALSE(resolve(symbol("$prev", {"no_such_member"}), &why));
  EXPECT_NE(why.find("unable to find member 'no_such_member' in struct task_struct"),
            std::string::npos)
      << why;
  EXPECT_FALSE(resolve(symbol("$prev", {"se"}), &why));
  EXPECT_NE(why.find("has type struct sched_entity"), std::string::npos) << why;
  EXPECT_FALSE(resolve(symbol("$nothing", {}), &why));
  EXPECT_NE(why.find("alternatives: $preempt, $prev, $next"), std::string::npos) << why;
  EXPECT_FALSE(resolve(symbol("$preempt", {"x"}), &why));
  EXPECT_NE(why.find("is not a pointer"), std::string::npos) << why;
}

} // namespace
} // namespace sonde::probes::tracepoint
