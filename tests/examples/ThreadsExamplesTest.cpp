// examples/threads/: per-thread views of the demo targets. request_server N T
// gives request i to worker i % T; prodcons P C ITEMS has each producer take
// the lock ITEMS times, the consumers P * ITEMS + C times between them.
#include "ExampleRun.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <regex>
#include <set>

namespace sonde::examples {
namespace {

TEST(ThreadsExamples, PerThreadCounts) {
  auto r = runExample("threads/per-thread-counts.probe",
                      {"-c", targetCommand("request_server", "300 4")});
  ASSERT_TRUE(r.exited && r.exitCode == 0) << describe(r);
  std::regex re("^worker (\\d+) \\(tid (\\d+)\\): (\\d+) requests served, (\\d+) reported$");
  std::set<long long> workers, tids;
  for (const std::string &line : test::linesOf(r.stdoutText)) {
    std::smatch m;
    if (!std::regex_match(line, m, re))
      continue;
    workers.insert(std::stoll(m[1]));
    tids.insert(std::stoll(m[2]));
    EXPECT_EQ(std::stoll(m[3]), 75) << line;
    EXPECT_EQ(std::stoll(m[4]), 75) << line;
  }
  EXPECT_EQ(workers, (std::set<long long>{0, 1, 2, 3})) << describe(r);
  EXPECT_EQ(tids.size(), 4u) << describe(r);
}

// Worker w of request_server 200 4 sleeps at least the service times of the
// requests w, w + 4, ...: 1, 2 or 4 ms by type (i % 3), 20 ms more for i % 50 == 49.
long long workerServiceUs(long long worker) {
  long long us = 0;
  for (long long id = worker; id < 200; id += 4)
    us += (id % 3 == 0 ? 1000 : id % 3 == 1 ? 2000 : 4000) + (id % 50 == 49 ? 20000 : 0);
  return us;
}

TEST(ThreadsExamples, ThreadLifecycle) {
  auto r = runExample("threads/thread-lifecycle.probe",
                      {"-c", targetCommand("request_server", "200 4")});
  ASSERT_TRUE(r.exited && r.exitCode == 0) << describe(r);
  std::regex re("^tid (\\d+): worker (\\d+), lived (\\d+) us, worked (\\d+) us$");
  std::map<long long, std::pair<long long, long long>> byWorker; // lived, worked
  for (const std::string &line : test::linesOf(r.stdoutText)) {
    std::smatch m;
    if (std::regex_match(line, m, re))
      byWorker[std::stoll(m[2])] = {std::stoll(m[3]), std::stoll(m[4])};
  }
  ASSERT_EQ(byWorker.size(), 4u) << describe(r);
  long long longest = 0;
  for (const auto &[worker, times] : byWorker) {
    EXPECT_GE(times.second, workerServiceUs(worker)) << worker << "\n" << describe(r);
    EXPECT_GE(times.first, times.second) << worker << "\n" << describe(r);
    longest = std::max(longest, times.first);
  }
  // The main thread began before the workers and ended after them.
  std::vector<long long> others = numbersAfter(r.stdoutText, "lived (\\d+) us \\(not a worker\\)$");
  ASSERT_EQ(others.size(), 1u) << describe(r);
  EXPECT_GE(others[0], longest) << describe(r);
}

TEST(ThreadsExamples, LockContention) {
  auto r =
      runExample("threads/lock-contention.probe", {"-c", targetCommand("prodcons", "2 2 2000")});
  ASSERT_TRUE(r.exited && r.exitCode == 0) << describe(r);
  std::regex re(
      "^thread (\\d+) \\(tid \\d+\\): (\\d+) acquisitions, waited (\\d+) us in all, at most (\\d+) "
      "us$");
  std::map<long long, long long> acquisitions, waited;
  for (const std::string &line : test::linesOf(r.stdoutText)) {
    std::smatch m;
    if (!std::regex_match(line, m, re))
      continue;
    acquisitions[std::stoll(m[1])] = std::stoll(m[2]);
    waited[std::stoll(m[1])] = std::stoll(m[3]);
    EXPECT_LE(std::stoll(m[4]), std::stoll(m[3])) << line;
  }
  ASSERT_EQ(acquisitions.size(), 4u) << describe(r);
  EXPECT_EQ(acquisitions[0], 2000) << describe(r);
  EXPECT_EQ(acquisitions[1], 2000) << describe(r);
  EXPECT_EQ(acquisitions[2] + acquisitions[3], 4002) << describe(r);
  // The three top waiters, longest first, with the totals printed above.
  std::regex top("^  thread (\\d+): (\\d+) us$");
  std::vector<long long> topWaits;
  for (const std::string &line : test::linesOf(r.stdoutText)) {
    std::smatch m;
    if (!std::regex_match(line, m, top))
      continue;
    EXPECT_EQ(std::stoll(m[2]), waited[std::stoll(m[1])]) << line;
    topWaits.push_back(std::stoll(m[2]));
  }
  ASSERT_EQ(topWaits.size(), 3u) << describe(r);
  EXPECT_TRUE(std::is_sorted(topWaits.rbegin(), topWaits.rend())) << describe(r);
  long long least = std::min({waited[0], waited[1], waited[2], waited[3]});
  EXPECT_GE(topWaits.back(), least) << describe(r);
  EXPECT_EQ(histogramTotal(blockFrom(r.stdoutText, "^all waits")), 8002) << describe(r);
}

TEST(ThreadsExamples, QueueDepth) {
  auto r = runExample("threads/queue-depth.probe", {"-c", targetCommand("prodcons", "2 2 2000")});
  ASSERT_TRUE(r.exited && r.exitCode == 0) << describe(r);
  // Every item consumed once, none left over.
  EXPECT_EQ(numberAfter(r.stdoutText, "^produced (\\d+), consumed 4000, left in the queue 0, "
                                      "consumed but never produced 0$"),
            4000)
      << describe(r);
  auto rows = [&](const std::string &heading) {
    std::map<long long, long long> out;
    std::regex re("^ *(\\d+) \\|[@ ]* (\\d+)$");
    for (const std::string &line : test::linesOf(blockFrom(r.stdoutText, heading))) {
      std::smatch m;
      if (std::regex_match(line, m, re))
        out[std::stoll(m[1])] = std::stoll(m[2]);
    }
    return out;
  };
  std::map<long long, long long> produced = rows("^depth after produce:$");
  std::map<long long, long long> consumed = rows("^depth after consume:$");
  long long producedTotal = 0, consumedTotal = 0;
  for (const auto &[depth, n] : produced)
    producedTotal += n;
  for (const auto &[depth, n] : consumed)
    consumedTotal += n;
  EXPECT_EQ(producedTotal, 4000) << describe(r);
  EXPECT_EQ(consumedTotal, 4000) << describe(r);
  // 16 slots: a produce leaves 1 to 16 items, a consume 0 to 15; the queue
  // starts and ends empty, so it is filled to d as often as drained to d - 1.
  EXPECT_EQ(produced[0], 0) << describe(r);
  EXPECT_EQ(consumed[16], 0) << describe(r);
  for (long long d = 1; d <= 16; ++d)
    EXPECT_EQ(produced[d], consumed[d - 1]) << d << "\n" << describe(r);
}

} // namespace
} // namespace sonde::examples
