// examples/lifecycle/: process.begin/end and thread.begin on the command -c
// starts. request_server 100 2 runs two workers, worker w serving requests w,
// w + 2, ...: 1, 2 or 4 ms by type (i % 3), 20 ms more for 49 and 99.
#include "ExampleRun.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <regex>

namespace sonde::examples {
namespace {

TEST(ProcessLifecycleExamples, ProcessLifecycle) {
  std::string command = targetCommand("request_server", "100 2");
  auto r = runExample("lifecycle/process-lifecycle.probe", {"-c", command});
  ASSERT_TRUE(r.exited && r.exitCode == 0) << describe(r);
  std::smatch begin, end;
  std::regex beginRe("(^|\\n)begin: pid (\\d+) \\(parent \\d+\\) request_server: ([^\\n]*)\\n");
  std::regex endRe(
      "(^|\\n)end: pid (\\d+) request_server ran (\\d+) ms, started (\\d+) threads \\(the "
      "command\\)\\n");
  ASSERT_TRUE(std::regex_search(r.stdoutText, begin, beginRe)) << describe(r);
  ASSERT_TRUE(std::regex_search(r.stdoutText, end, endRe)) << describe(r);
  EXPECT_EQ(begin[2], end[2]) << describe(r);
  EXPECT_EQ(begin[3], command) << describe(r);
  EXPECT_EQ(end[4], "2") << describe(r);
  // It ran at least as long as its busier worker slept.
  long long slept[2] = {0, 0};
  for (long long id = 0; id < 100; ++id)
    slept[id % 2] += (id % 3 == 0 ? 1 : id % 3 == 1 ? 2 : 4) + (id % 50 == 49 ? 20 : 0);
  EXPECT_GE(std::stoll(end[3]), std::max(slept[0], slept[1])) << describe(r);
  // One process: one begin, one end.
  EXPECT_EQ(numbersAfter(r.stdoutText, "^begin: pid (\\d+)").size(), 1u) << describe(r);
  EXPECT_EQ(numbersAfter(r.stdoutText, "^end: pid (\\d+)").size(), 1u) << describe(r);
}

} // namespace
} // namespace sonde::examples
