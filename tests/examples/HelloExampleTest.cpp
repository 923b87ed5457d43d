// examples/hello.probe: the README's first command.
#include "ExampleRun.h"

#include <gtest/gtest.h>

namespace sonde::examples {
namespace {

TEST(HelloExample, GreetsAndCountsFiveTicks) {
  auto r = runExample("hello.probe", {});
  ASSERT_TRUE(r.exited && r.exitCode == 0) << describe(r);
  EXPECT_EQ(r.stdoutText, "hello from sonde\nticks=5\n") << describe(r);
}

} // namespace
} // namespace sonde::examples
