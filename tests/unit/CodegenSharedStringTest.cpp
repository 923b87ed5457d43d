// String globals live in the shared segment, where a traced process may leave
// one without its terminator: what generated code does with them stays inside
// the global's buffer.
#include "CodegenTestSupport.h"

#include "runtime/values/SegmentFormat.h"

#include <gtest/gtest.h>

#include <cstring>

namespace sonde::test {
namespace {

TEST(CodegenSharedString, AppendingToAnUnterminatedGlobalStaysInItsBuffer) {
  auto m = CompiledModule::compile("global s, n\nprobe begin { s .= \"xy\"; n = strlen(s) }\n");
  ASSERT_TRUE(m->ok()) << m->diagnostics();
  HandlerHarness h(*m);
  const values::GlobalLayout &layout = m->layout();
  uint32_t cap = layout.limits().max_string_len;
  int index = layout.find("s");
  ASSERT_GE(index, 0);
  char *s = static_cast<char *>(h.segment().base()) + layout.placements()[index].dataOffset;
  std::memset(s, 'a', cap);
  // The bytes just past the buffer: another global's, or padding.
  char after[64];
  std::memcpy(after, s + cap, sizeof after);
  ASSERT_EQ(h.run(0), 0);
  EXPECT_EQ(std::memcmp(s + cap, after, sizeof after), 0) << "wrote past the string's buffer";
  EXPECT_EQ(strnlen(s, cap), cap - 1);
  EXPECT_EQ(h.longGlobal("n"), cap - 1);
}

} // namespace
} // namespace sonde::test
