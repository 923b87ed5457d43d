// codegen/DeadLocalStores: which `local = value` statements a handler skips.
#include "codegen/DeadLocalStores.h"

#include "SemaTestSupport.h"

#include <gtest/gtest.h>

namespace sonde::test {
namespace {

// The lines of the first probe's statements that are dead stores (the body is
// one statement a line after `probe begin {`).
std::vector<uint32_t> deadLines(const std::string &body) {
  Elaborated e = elaborateText("probe begin {\n" + body + "\n}\n");
  EXPECT_TRUE(e.ok) << e.diagnostics;
  if (!e.ok)
    return {};
  ast::DerivedProbe &p = *e.script.derived.front();
  std::vector<uint32_t> lines;
  for (const ast::Stmt *s : codegen::deadLocalStores(*p.body, p.condition.get()))
    lines.push_back(s->tok.loc.line);
  std::sort(lines.begin(), lines.end());
  return lines;
}

TEST(DeadLocalStores, ChainsOfUnreadStoresAreDeadToTheEnd) {
  EXPECT_EQ(deadLines("a = 1\nb = a\nc = b\nprintln(1)"), (std::vector<uint32_t>{2, 3, 4}));
  EXPECT_EQ(deadLines("a = 1\nb = a\nc = b\nprintln(c)"), (std::vector<uint32_t>{}));
  EXPECT_EQ(deadLines("a = 1\nb = a\nc = b\nprintln(b)"), (std::vector<uint32_t>{4}));
}

TEST(DeadLocalStores, EffectsAndCyclesKeepStores) {
  // A store whose value has an effect is kept, and so is what it reads.
  EXPECT_EQ(deadLines("a = 1\nb = (a = 2)\nprintln(1)"), (std::vector<uint32_t>{}));
  // Locals that only read each other stay, as in stap's elision.
  EXPECT_EQ(deadLines("a = 1\nb = a\na = b\nprintln(1)"), (std::vector<uint32_t>{}));
}

} // namespace
} // namespace sonde::test
