// examples/latency/: paired markers timed by the request_server demo target,
// whose service times are known (1, 2, 4 ms by type, 20 ms more for every
// 50th request).
#include "ExampleRun.h"

#include <gtest/gtest.h>

#include <set>

namespace sonde::examples {
namespace {

TEST(LatencyExamples, RequestLatency) {
  auto r =
      runExample("latency/request-latency.probe", {"-c", targetCommand("request_server", "300")});
  ASSERT_TRUE(r.exited && r.exitCode == 0) << describe(r);
  // 100 requests of each type, the averages ordered as the service times are.
  std::vector<long long> counts = numbersAfter(r.stdoutText, "^type \\d+: (\\d+) requests");
  EXPECT_EQ(counts, (std::vector<long long>{100, 100, 100})) << describe(r);
  auto avg = [&](int type) {
    return numberAfter(r.stdoutText,
                       "^type " + std::to_string(type) + ": \\d+ requests, avg (\\d+)")
        .value_or(-1);
  };
  // 1 ms and 4 ms of service: far enough apart to stay ordered on a busy machine.
  EXPECT_GE(avg(0), 1000000);
  EXPECT_GT(avg(2), avg(0));
  // The five slowest: mostly among the six requests with 20 ms more (a busy
  // machine may delay another one as much).
  std::vector<long long> slowest = numbersAfter(r.stdoutText, "^  request (\\d+): \\d+ ns");
  ASSERT_EQ(slowest.size(), 5u) << describe(r);
  std::set<long long> slow = {49, 99, 149, 199, 249, 299};
  int known = 0;
  for (long long id : slowest)
    known += slow.count(id) ? 1 : 0;
  EXPECT_GE(known, 3) << describe(r);
  // The histogram holds every request once.
  long long total = 0;
  for (long long n : numbersAfter(r.stdoutText, "^ *\\d+ \\|[@ ]* (\\d+)$"))
    total += n;
  EXPECT_EQ(total, 300) << describe(r);
}

} // namespace
} // namespace sonde::examples
