// examples/latency/: paired markers timed by the request_server demo target,
// whose service times are known (1, 2, 4 ms by type, 20 ms more for every
// 50th request).
#include "ExampleRun.h"

#include <gtest/gtest.h>

#include <regex>
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
  EXPECT_EQ(histogramTotal(r.stdoutText), 300) << describe(r);
}

// Requests whose id is 7 modulo 10 fail: 30 of 300, 10 of each type, none of
// them one of the slow ones (49, 99, ...: 9 modulo 10).
TEST(LatencyExamples, LatencyByStatus) {
  auto r =
      runExample("latency/latency-by-status.probe", {"-c", targetCommand("request_server", "300")});
  ASSERT_TRUE(r.exited && r.exitCode == 0) << describe(r);
  EXPECT_EQ(numbersAfter(r.stdoutText, "^status (\\d+): "), (std::vector<long long>{200, 500}))
      << describe(r);
  EXPECT_EQ(numberAfter(r.stdoutText, "^status 200: (\\d+) requests"), 270) << describe(r);
  EXPECT_EQ(numberAfter(r.stdoutText, "^status 500: (\\d+) requests"), 30) << describe(r);
  std::string ok = blockFrom(r.stdoutText, "^status 200:");
  std::string failed = blockFrom(r.stdoutText, "^status 500:");
  EXPECT_EQ(histogramTotal(ok), 270) << describe(r);
  EXPECT_EQ(histogramTotal(failed), 30) << describe(r);
  // Every slow request succeeded (20 ms more); no failed one slept more than 4 ms.
  EXPECT_GE(numberAfter(ok, "max (\\d+) ns").value_or(-1), 21000000) << describe(r);
  EXPECT_GE(numberAfter(failed, "max (\\d+) ns").value_or(-1), 4000000) << describe(r);
  EXPECT_GE(numberAfter(failed, "avg (\\d+) ns").value_or(-1), 7000000 / 3) << describe(r);
}

struct Slow {
  long long id, ns, type;
};

std::vector<Slow> slowestOf(const std::string &text) {
  std::vector<Slow> out;
  std::regex re("^  request (\\d+): (\\d+) ns, type (get|put|scan), status (\\d+)$");
  for (const std::string &line : test::linesOf(text)) {
    std::smatch m;
    if (std::regex_match(line, m, re))
      out.push_back({std::stoll(m[1]), std::stoll(m[2]),
                     m[3] == "get"   ? 0
                     : m[3] == "put" ? 1
                                     : 2});
  }
  return out;
}

// A request's service time: 1, 2 or 4 ms by type, 20 ms more for the slow ones.
long long serviceNs(long long id) {
  return (id % 3 == 0 ? 1000000 : id % 3 == 1 ? 2000000 : 4000000) + (id % 50 == 49 ? 20000000 : 0);
}

// N from the script's argument: the 3 slowest are slow ones (20 ms more than
// any other), slowest first, with the type the target gave them (id % 3).
TEST(LatencyExamples, SlowestRequests) {
  auto r = runExample("latency/slowest-requests.probe",
                      {"-c", targetCommand("request_server", "300")}, {"3"});
  ASSERT_TRUE(r.exited && r.exitCode == 0) << describe(r);
  EXPECT_EQ(numberAfter(r.stdoutText, "^3 slowest of (\\d+) requests:$"), 300) << describe(r);
  std::vector<Slow> slowest = slowestOf(r.stdoutText);
  ASSERT_EQ(slowest.size(), 3u) << describe(r);
  std::set<long long> slow = {49, 99, 149, 199, 249, 299};
  for (size_t i = 0; i < slowest.size(); ++i) {
    EXPECT_TRUE(slow.count(slowest[i].id)) << slowest[i].id << "\n" << describe(r);
    EXPECT_EQ(slowest[i].type, slowest[i].id % 3) << describe(r);
    EXPECT_GE(slowest[i].ns, serviceNs(slowest[i].id)) << describe(r);
    if (i > 0)
      EXPECT_LE(slowest[i].ns, slowest[i - 1].ns) << describe(r);
  }
}

// Without an argument N is 5: of 150 requests, the three slow ones (49, 99,
// 149) first, then two others.
TEST(LatencyExamples, SlowestRequestsDefaultCount) {
  auto r =
      runExample("latency/slowest-requests.probe", {"-c", targetCommand("request_server", "150")});
  ASSERT_TRUE(r.exited && r.exitCode == 0) << describe(r);
  EXPECT_EQ(numberAfter(r.stdoutText, "^5 slowest of (\\d+) requests:$"), 150) << describe(r);
  std::vector<Slow> slowest = slowestOf(r.stdoutText);
  ASSERT_EQ(slowest.size(), 5u) << describe(r);
  EXPECT_EQ((std::set<long long>{slowest[0].id, slowest[1].id, slowest[2].id}),
            (std::set<long long>{49, 99, 149}))
      << describe(r);
  for (const Slow &s : slowest) {
    EXPECT_EQ(s.type, s.id % 3) << describe(r);
    EXPECT_GE(s.ns, serviceNs(s.id)) << describe(r);
  }
}

// Each type has 100 requests, two of them slow (20 ms more): the 99th
// percentile (rank 99 of 100) is one of those, the median is not.
TEST(LatencyExamples, ServiceTimePercentiles) {
  auto r = runExample("latency/service-time-percentiles.probe",
                      {"-c", targetCommand("request_server", "300")});
  ASSERT_TRUE(r.exited && r.exitCode == 0) << describe(r);
  const char *names[] = {"get", "put", "scan"};
  const long long serviceNs[] = {1000000, 2000000, 4000000};
  long long previousP50 = 0;
  for (int type = 0; type < 3; ++type) {
    std::string line = "^type " + std::string(names[type]) + ": ";
    auto field = [&](const std::string &name) {
      return numberAfter(r.stdoutText, line + ".*" + name + " (\\d+) ns").value_or(-1);
    };
    EXPECT_EQ(numberAfter(r.stdoutText, line + "(\\d+) requests"), 100) << describe(r);
    EXPECT_GE(field("p50"), serviceNs[type]) << describe(r);
    EXPECT_LT(field("p50"), serviceNs[type] + 20000000) << describe(r);
    EXPECT_GE(field("p90"), field("p50")) << describe(r);
    EXPECT_GE(field("p99"), serviceNs[type] + 20000000) << describe(r);
    EXPECT_GE(field("max"), field("p99")) << describe(r);
    EXPECT_GT(field("p50"), previousP50) << describe(r);
    previousP50 = field("p50");
  }
  std::string hist = blockFrom(r.stdoutText, "^all requests \\(ms\\):$");
  EXPECT_EQ(histogramTotal(hist), 300) << describe(r);
  // Nothing is faster than 1 ms: the 0 ms row is empty.
  EXPECT_EQ(numberAfter(hist, "^ +0 \\|[@ ]* (\\d+)$"), 0) << describe(r);
}

} // namespace
} // namespace sonde::examples
