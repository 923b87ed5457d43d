// Aggregates fed in kernel probes read as userspace probes' do: @count, @sum,
// @min, @max, @avg and @variance of known samples sent through
// syscalls:sys_enter_close, some on one CPU, some on another, some wherever the
// scheduler puts them, against the numbers and against the same samples added
// in a `begin` probe.
#include "KernelScriptSupport.h"

#include <sched.h>
#include <string>
#include <vector>

namespace {

using namespace sonde::test;

// The first two CPUs this test may run on (the same one twice on one CPU).
std::pair<int, int> twoCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    for (int c = 0; c < CPU_SETSIZE && cpus.size() < 2; ++c)
      if (CPU_ISSET(c, &set))
        cpus.push_back(c);
  if (cpus.empty())
    return {0, 0};
  return {cpus.front(), cpus.back()};
}

// Each aggregate's six extractors, one line each; the samples come from
// FEED, which defines feed(v) and constant(v).
const char *kAggregates = R"(
global even, neg, big, shifted, one, constant, per
function feed(v) {
  even <<< v; neg <<< -v; big <<< 1000000000000 + v; shifted <<< v; per["even"] <<< v
  if (v == 2) one <<< -42
}
function feed_constant(v) { constant <<< v; per["constant"] <<< v }
probe end {
  printf("even %d %d %d %d %d %d\n", @count(even), @sum(even), @min(even), @max(even),
         @avg(even), @variance(even))
  printf("neg %d %d %d %d %d %d\n", @count(neg), @sum(neg), @min(neg), @max(neg),
         @avg(neg), @variance(neg))
  printf("big %d %d %d %d %d %d\n", @count(big), @sum(big), @min(big), @max(big),
         @avg(big), @variance(big))
  printf("shifted %d\n", @variance(shifted, 4))
  printf("one %d %d %d %d %d %d\n", @count(one), @sum(one), @min(one), @max(one),
         @avg(one), @variance(one))
  printf("constant %d %d %d %d %d %d\n", @count(constant), @sum(constant), @min(constant),
         @max(constant), @avg(constant), @variance(constant))
  foreach (k+ in per)
    printf("per[%s] %d %d %d %d %d %d\n", k, @count(per[k]), @sum(per[k]), @min(per[k]),
           @max(per[k]), @avg(per[k]), @variance(per[k]))
}
)";

// {2, 4, 6} on one CPU (mean 4, variance 4), {8, ..., 18} on another (mean 13,
// variance 14): together mean 10 and variance 240 / 8 = 30, every mean whole,
// so stap's integer arithmetic gives the exact numbers however they are split.
// 1000 samples of 5000 on any CPUs: variance 0.
const char *kExpected = "even 9 90 2 18 10 30\n"
                        "neg 9 -90 -18 -2 -10 30\n"
                        "big 9 9000000000090 1000000000002 1000000000018 1000000000010 30\n"
                        "shifted 30\n"
                        "one 1 -42 -42 -42 -42 0\n"
                        "constant 1000 5000000 5000 5000 5000 0\n"
                        "per[constant] 1000 5000000 5000 5000 5000 0\n"
                        "per[even] 9 90 2 18 10 30\n";

TEST(KernelAggregates, ExtractorsGiveTheUserspaceNumbers) {
  auto [first, second] = twoCpus();
  // fds 1001..1003 on the first CPU, 1004..1009 on the second, 5000 anywhere.
  std::string closes = "oncpus " + std::to_string(first) + " 3 1001 3 " + std::to_string(second) +
                       " 6 1004 6 -1 1000 5000 1";
  ProcessResult kernel =
      runSonde({"-e", std::string(R"(probe kernel.trace("syscalls:sys_enter_close") {
  if (pid() != target()) next
  if ($fd == 5000) feed_constant($fd)
  else if ($fd >= 1001 && $fd <= 1009) feed(($fd - 1000) * 2)
})") + kAggregates,
                "-c", workload(closes)});
  SKIP_UNLESS_PERMITTED(kernel);
  ASSERT_TRUE(kernel.exited && kernel.exitCode == 0) << describe(kernel);
  EXPECT_EQ(kernel.stdoutText, kExpected) << describe(kernel);

  ProcessResult user = runSonde({"-e", std::string(R"(probe begin {
  for (fd = 1001; fd <= 1009; fd++) feed((fd - 1000) * 2)
  for (i = 0; i < 1000; i++) feed_constant(5000)
  exit()
})") + kAggregates});
  ASSERT_TRUE(user.exited && user.exitCode == 0) << describe(user);
  EXPECT_EQ(kernel.stdoutText, user.stdoutText);
}

} // namespace
