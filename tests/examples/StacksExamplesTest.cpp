// examples/stacks/: user stacks at the demo targets' markers. Their call
// chains are known: prodcons takes its lock in producer() and consumer(),
// request_server's markers are all in worker(), stock_app's in main(); every
// thread runs from start_thread; the agent's own thread-start frame is not shown.
#include "ExampleRun.h"

#include <gtest/gtest.h>

#include <map>
#include <regex>

namespace sonde::examples {
namespace {

// The stack printed under "N hits at:" (its frames up to the empty line).
std::string stackWith(const std::string &text, long long hits) {
  return blockFrom(text, "^" + std::to_string(hits) + " hits at:$");
}

// Producers take the lock 2 x 2000 times, the consumers 2 x 2000 + 2 (once
// each to stop): two stacks, the consumers' first.
TEST(StacksExamples, BacktraceAtDefaultMarker) {
  auto r =
      runExample("stacks/backtrace-at-marker.probe", {"-c", targetCommand("prodcons", "2 2 2000")});
  ASSERT_TRUE(r.exited && r.exitCode == 0) << describe(r);
  EXPECT_EQ(numberAfter(r.stdoutText, "^(\\d+) hits, 2 distinct stacks$"), 8002) << describe(r);
  EXPECT_EQ(numbersAfter(r.stdoutText, "^(\\d+) hits at:$"), (std::vector<long long>{4002, 4000}))
      << describe(r);
  std::regex consumer("^4002 hits at:\\nconsumer\\+0x[0-9a-f]+ \\[prodcons\\]\\n");
  std::regex producer("^4000 hits at:\\nproducer\\+0x[0-9a-f]+ \\[prodcons\\]\\n");
  EXPECT_TRUE(std::regex_search(stackWith(r.stdoutText, 4002), consumer)) << describe(r);
  EXPECT_TRUE(std::regex_search(stackWith(r.stdoutText, 4000), producer)) << describe(r);
  for (long long hits : {4002, 4000})
    EXPECT_NE(stackWith(r.stdoutText, hits).find("\nstart_thread+0x"), std::string::npos)
        << describe(r);
}

// The marker named by the script's argument.
TEST(StacksExamples, BacktraceAtNamedMarker) {
  auto r = runExample("stacks/backtrace-at-marker.probe",
                      {"-c", targetCommand("request_server", "20")}, {"bytes_sent"});
  ASSERT_TRUE(r.exited && r.exitCode == 0) << describe(r);
  EXPECT_EQ(numberAfter(r.stdoutText, "^(\\d+) hits, 1 distinct stacks$"), 20) << describe(r);
  EXPECT_TRUE(
      std::regex_search(stackWith(r.stdoutText, 20),
                        std::regex("^20 hits at:\\nworker\\+0x[0-9a-f]+ \\[request_server\\]\\n")))
      << describe(r);
}

// Folded lines "frame;...;marker count": counts per marker, frames root first.
std::map<std::string, long long> foldedCounts(const test::ProcessResult &r,
                                              const std::string &chain) {
  std::map<std::string, long long> byMarker;
  std::regex re("^(\\S+;)(\\w+) (\\d+)$");
  for (const std::string &line : test::linesOf(r.stdoutText)) {
    std::smatch m;
    if (!std::regex_match(line, m, re))
      continue;
    EXPECT_NE(m[1].str().find(chain), std::string::npos) << line << "\n" << describe(r);
    byMarker[m[2]] += std::stoll(m[3]);
  }
  return byMarker;
}

TEST(StacksExamples, FlameFeed) {
  auto r = runExample("stacks/flame-feed.probe", {"-c", targetCommand("request_server", "300 2")});
  ASSERT_TRUE(r.exited && r.exitCode == 0) << describe(r);
  std::map<std::string, long long> expected = {{"bytes_sent", 300},
                                               {"request_done", 300},
                                               {"request_start", 300},
                                               {"worker_done", 2},
                                               {"worker_start", 2}};
  // start_thread calls worker, which fires the marker.
  EXPECT_EQ(foldedCounts(r, "start_thread;"), expected) << describe(r);
  EXPECT_EQ(foldedCounts(r, ";worker;"), expected) << describe(r);
  // Nothing of sonde's between the C library's thread start and the program.
  EXPECT_TRUE(std::regex_search(
      r.stdoutText, std::regex("(^|\\n)[^\\n]*start_thread;worker;request_start 300\\n")))
      << describe(r);
}

// stock_app's markers are stock <sys/sdt.h> ones (the trap path), all in
// main(): 3 rounds of 3 phases allocate 3 x (1 + 2 + 3) blocks.
TEST(StacksExamples, FlameFeedTrapPath) {
  auto r = runExample("stacks/flame-feed.probe", {"-c", targetCommand("stock_app", "3")});
  ASSERT_TRUE(r.exited && r.exitCode == 0) << describe(r);
  std::map<std::string, long long> expected = {
      {"alloc", 18}, {"checkpoint", 2}, {"phase_end", 9}, {"phase_start", 9}, {"release", 18}};
  EXPECT_EQ(foldedCounts(r, "__libc_start_call_main;main;"), expected) << describe(r);
}

} // namespace
} // namespace sonde::examples
