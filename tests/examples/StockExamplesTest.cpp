// examples/stock/: stock_app, instrumented with the stock <sys/sdt.h> (its
// markers go through a trap). Phase p of round r allocates (p + 1) KiB r + 1
// times and frees them all; checkpoints "begin" and "end" bracket the rounds.
#include "ExampleRun.h"

#include <gtest/gtest.h>

namespace sonde::examples {
namespace {

TEST(StockExamples, StockPhases) {
  auto r = runExample("stock/stock-phases.probe", {"-c", targetCommand("stock_app", "5")});
  ASSERT_TRUE(r.exited && r.exitCode == 0) << describe(r);
  // The strings read from the target's memory, in the order it passed them.
  std::vector<std::string> checkpoints;
  for (const std::string &line : test::linesOf(r.stdoutText))
    if (line.rfind("checkpoint ", 0) == 0)
      checkpoints.push_back(line.substr(11));
  EXPECT_EQ(checkpoints, (std::vector<std::string>{"begin", "end"})) << describe(r);
  // 5 rounds: every phase runs 5 times and allocates 1 + 2 + ... + 5 = 15 blocks.
  for (int phase = 0; phase < 3; ++phase) {
    std::string line = "^phase " + std::to_string(phase) + ": ";
    EXPECT_EQ(numberAfter(r.stdoutText, line + "(\\d+) runs"), 5) << describe(r);
    EXPECT_EQ(numberAfter(r.stdoutText, line + ".*; (\\d+) allocations"), 15) << describe(r);
    EXPECT_EQ(numberAfter(r.stdoutText, line + ".* (\\d+) bytes$"), 15 * (phase + 1) * 1024)
        << describe(r);
    long long avg = numberAfter(r.stdoutText, line + ".* avg (\\d+) ns").value_or(-1);
    EXPECT_GT(avg, 0) << describe(r);
    EXPECT_GE(numberAfter(r.stdoutText, line + ".* longest (\\d+) ns").value_or(-1), avg)
        << describe(r);
  }
  EXPECT_EQ(numberAfter(r.stdoutText, "^(\\d+) allocations, 92160 bytes, 0 bytes not released$"),
            45)
      << describe(r);
  // 1 KiB blocks in the 1024 row, 2 and 3 KiB ones in the 2048 row.
  std::string sizes = blockFrom(r.stdoutText, "^allocation sizes");
  EXPECT_EQ(numberAfter(sizes, "^ *1024 \\|[@ ]* (\\d+)$"), 15) << describe(r);
  EXPECT_EQ(numberAfter(sizes, "^ *2048 \\|[@ ]* (\\d+)$"), 30) << describe(r);
  EXPECT_EQ(histogramTotal(sizes), 45) << describe(r);
}

} // namespace
} // namespace sonde::examples
