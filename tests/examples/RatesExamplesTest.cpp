// examples/rates/: counts of the request_server demo target's markers, whose
// numbers are known: REQUESTS of request_start, request_done and bytes_sent;
// 100 * (type + 1) bytes; status 500 for the ids 7 modulo 10.
#include "ExampleRun.h"

#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>

namespace sonde::examples {
namespace {

// 1000 requests take about 2.8 s: at least two whole seconds, each with at most
// 430 requests (three take at least 1 + 2 + 4 ms).
TEST(RatesExamples, EventsPerSecond) {
  auto r =
      runExample("rates/events-per-second.probe", {"-c", targetCommand("request_server", "1000")});
  ASSERT_TRUE(r.exited && r.exitCode == 0) << describe(r);
  std::map<std::string, long long> sums;
  std::set<long long> seconds;
  std::regex re("^(second (\\d+)|rest) (\\w+): (\\d+)$");
  for (const std::string &line : test::linesOf(r.stdoutText)) {
    std::smatch m;
    if (!std::regex_match(line, m, re))
      continue;
    long long n = std::stoll(m[4]);
    sums[m[3]] += n;
    if (m[1] != "rest") {
      seconds.insert(std::stoll(m[2]));
      if (m[3] == "request_start")
        EXPECT_LE(n, 430) << line << "\n" << describe(r);
    }
  }
  EXPECT_GE(seconds.size(), 2u) << describe(r);
  std::map<std::string, long long> expected = {{"bytes_sent", 1000},
                                               {"request_done", 1000},
                                               {"request_start", 1000},
                                               {"worker_done", 1},
                                               {"worker_start", 1}};
  EXPECT_EQ(sums, expected) << describe(r);
  for (const auto &[name, n] : expected)
    EXPECT_EQ(numberAfter(r.stdoutText, "^total " + name + ": (\\d+)$"), n) << describe(r);
}

// Per type 90 good and 10 failed requests of 100 * (type + 1) bytes; the top 4
// by bytes are the three good rows, then the failed "scan" ones.
TEST(RatesExamples, TopCounters) {
  auto r =
      runExample("rates/top-counters.probe", {"-c", targetCommand("request_server", "300")}, {"4"});
  ASSERT_TRUE(r.exited && r.exitCode == 0) << describe(r);
  EXPECT_EQ(numberAfter(r.stdoutText, "^(\\d+) bytes in 300 requests; top 4 by bytes:$"), 60000)
      << describe(r);
  std::vector<std::string> keys;
  std::vector<long long> bytes, requests;
  std::regex re("^  (\\w+) +(\\d+): +(\\d+) bytes in +(\\d+) requests \\((\\d+)%\\)$");
  for (const std::string &line : test::linesOf(r.stdoutText)) {
    std::smatch m;
    if (!std::regex_match(line, m, re))
      continue;
    keys.push_back(m[1].str() + " " + m[2].str());
    bytes.push_back(std::stoll(m[3]));
    requests.push_back(std::stoll(m[4]));
  }
  EXPECT_EQ(keys, (std::vector<std::string>{"scan 200", "put 200", "get 200", "scan 500"}))
      << describe(r);
  EXPECT_EQ(bytes, (std::vector<long long>{27000, 18000, 9000, 3000})) << describe(r);
  EXPECT_EQ(requests, (std::vector<long long>{90, 90, 90, 10})) << describe(r);
}

TEST(RatesExamples, StatusCodes) {
  auto r = runExample("rates/status-codes.probe", {"-c", targetCommand("request_server", "300")});
  ASSERT_TRUE(r.exited && r.exitCode == 0) << describe(r);
  EXPECT_EQ(numbersAfter(r.stdoutText, "^status (\\d+): "), (std::vector<long long>{200, 500}))
      << describe(r);
  EXPECT_EQ(numberAfter(r.stdoutText, "^status 200: (\\d+) of 300 requests \\(90%\\)$"), 270)
      << describe(r);
  EXPECT_EQ(numberAfter(r.stdoutText, "^status 500: (\\d+) of 300 requests \\(10%\\)$"), 30)
      << describe(r);
  std::string line = blockFrom(r.stdoutText, "^first failed requests:");
  EXPECT_EQ(line, "first failed requests: 7 17 27 37 47 57 67 77 87 97\n") << describe(r);
}

} // namespace
} // namespace sonde::examples
