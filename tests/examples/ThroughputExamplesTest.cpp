// examples/throughput/: compare-transports.sh streams one record per item
// prodcons produces through each transport; in block mode none is lost.
#include "ExampleRun.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <regex>

namespace sonde::examples {
namespace {

TEST(ThroughputExamples, CompareTransports) {
  char dir[] = "/tmp/sonde-example-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  auto r = test::runProcess("/usr/bin/env",
                            {"SONDE=" + std::string(SONDE_BINARY),
                             "TARGETS=" + std::string(SONDE_EXAMPLE_TARGETS_DIR), "sh",
                             examplePath("throughput/compare-transports.sh"), "20000"},
                            dir, std::chrono::seconds(120));
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  ASSERT_TRUE(r.exited && r.exitCode == 0) << describe(r);
  std::regex row("^(\\w+) +block +(\\d+) +(\\d+) +([0-9.]+) +([0-9.]+) +(\\d+)$");
  std::vector<std::string> transports;
  for (const std::string &line : test::linesOf(r.stdoutText)) {
    std::smatch m;
    if (!std::regex_match(line, m, row))
      continue;
    transports.push_back(m[1]);
    EXPECT_EQ(std::stoll(m[2]), 20000) << line;
    // About 100 bytes a record: more than the 80 of padding, less than 120.
    EXPECT_GT(std::stoll(m[3]), 20000 * 80) << line;
    EXPECT_LT(std::stoll(m[3]), 20000 * 120) << line;
    EXPECT_GT(std::stod(m[4]), 0) << line;
    EXPECT_GT(std::stod(m[5]), 0) << line;
    EXPECT_EQ(std::stoll(m[6]), 0) << line;
  }
  EXPECT_EQ(transports, (std::vector<std::string>{"text", "relay", "netlink"})) << describe(r);
}

} // namespace
} // namespace sonde::examples
