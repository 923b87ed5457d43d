// examples/throughput/: compare-transports.sh drives b3_target's records through
// each transport: every record fired is delivered (block mode) or counted as
// lost (discard mode), with the rates and CPU cost of each.
#include "ExampleRun.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <regex>

namespace sonde::examples {
namespace {

struct Row {
  std::string transport, mode;
  long long records = 0, delivered = 0, lost = 0;
  double mb = 0, seconds = 0, recordsPerSecond = 0, mbPerSecond = 0, cpuNsPerRecord = 0;
};

// Runs the script with `options` (a small volume: the test stays fast) and
// returns its rows.
std::vector<Row> compareTransports(const std::vector<std::string> &options) {
  char dir[] = "/tmp/sonde-example-XXXXXX";
  if (mkdtemp(dir) == nullptr)
    return {};
  std::vector<std::string> args{
      "SONDE=" + std::string(SONDE_BINARY), "TARGETS=" + std::string(SONDE_EXAMPLE_TARGETS_DIR),
      "TMPDIR=" + std::string(dir), "sh", examplePath("throughput/compare-transports.sh")};
  args.insert(args.end(), options.begin(), options.end());
  auto r = test::runProcess("/usr/bin/env", args, dir, std::chrono::seconds(120));
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  EXPECT_TRUE(r.exited && r.exitCode == 0) << describe(r);
  // Seconds and the rates are n/a when the run took under 10 ms more than the
  // same run on 0 records: too little to time at the test's small volumes.
  std::regex row("^(\\w+) +(block|discard) +\\S+ +(\\d+) +(\\d+) +(\\d+) +([0-9.]+) +([0-9.]+|n/a) "
                 "+([0-9.]+|n/a) +([0-9.]+|n/a) +([0-9.]+)$");
  std::vector<Row> rows;
  for (const std::string &line : test::linesOf(r.stdoutText)) {
    std::smatch m;
    if (!std::regex_match(line, m, row))
      continue;
    auto timed = [](const std::string &v) { return v == "n/a" ? -1.0 : std::stod(v); };
    rows.push_back({m[1], m[2], std::stoll(m[3]), std::stoll(m[4]), std::stoll(m[5]),
                    std::stod(m[6]), timed(m[7]), timed(m[8]), timed(m[9]), std::stod(m[10])});
  }
  EXPECT_FALSE(rows.empty()) << describe(r);
  return rows;
}

TEST(ThroughputExamples, CompareTransportsDeliversEveryRecordInBlockMode) {
  auto rows = compareTransports({"-n", "20000"});
  std::vector<std::string> transports;
  for (const Row &row : rows) {
    transports.push_back(row.transport);
    EXPECT_EQ(row.mode, "block");
    EXPECT_EQ(row.records, 20000) << row.transport;
    EXPECT_EQ(row.delivered, 20000) << row.transport;
    EXPECT_EQ(row.lost, 0) << row.transport;
    // About 100 bytes a record: more than the 91 of padding, less than 120.
    EXPECT_GT(row.mb * 1e6, 20000 * 91.0) << row.transport;
    EXPECT_LT(row.mb * 1e6, 20000 * 120.0) << row.transport;
    // Timed (not n/a): all three are, and agree with the volume.
    if (row.seconds >= 0) {
      EXPECT_GT(row.seconds, 0) << row.transport;
      // Seconds are printed to 0.5 ms and MB to 0.05: at this volume that
      // rounding alone moves a rate by several percent.
      double fast = row.seconds - 0.0005, slow = row.seconds + 0.0005;
      EXPECT_GE(row.recordsPerSecond, 0.99 * row.delivered / slow) << row.transport;
      EXPECT_LE(row.recordsPerSecond, 1.01 * row.delivered / fast) << row.transport;
      EXPECT_GE(row.mbPerSecond, 0.99 * (row.mb - 0.05) / slow - 0.1) << row.transport;
      EXPECT_LE(row.mbPerSecond, 1.01 * (row.mb + 0.05) / fast + 0.1) << row.transport;
    } else {
      EXPECT_EQ(row.recordsPerSecond, -1) << row.transport;
      EXPECT_EQ(row.mbPerSecond, -1) << row.transport;
    }
    EXPECT_GE(row.cpuNsPerRecord, 0) << row.transport;
  }
  EXPECT_EQ(transports, (std::vector<std::string>{"text", "relay", "netlink"}));
}

TEST(ThroughputExamples, CompareTransportsCountsWhatDiscardModeLoses) {
  // Two writer threads into 1 MB buffers: whatever is dropped is counted.
  auto rows = compareTransports(
      {"-n", "200000", "-m", "discard", "-s", "1", "-t", "2", "-T", "relay netlink"});
  std::vector<std::string> transports;
  for (const Row &row : rows) {
    transports.push_back(row.transport);
    EXPECT_EQ(row.mode, "discard");
    EXPECT_EQ(row.records, 200000) << row.transport;
    EXPECT_EQ(row.delivered + row.lost, row.records) << row.transport;
  }
  EXPECT_EQ(transports, (std::vector<std::string>{"relay", "netlink"}));
}

TEST(ThroughputExamples, FirehoseMakesOneRecordPerHit) {
  auto r = runExample("throughput/firehose.probe", {"-c", targetCommand("b3_target", "1 3")});
  ASSERT_TRUE(r.exited && r.exitCode == 0) << describe(r);
  EXPECT_EQ(rowsMatching(r.stdoutText, "^(\\d+) 0 \\.{91}$"),
            (std::vector<std::vector<std::string>>{{"0"}, {"1"}, {"2"}}))
      << describe(r);
  EXPECT_EQ(numberAfter(r.stdoutText, "^fired=(\\d+) seconds="), 3) << describe(r);
}

} // namespace
} // namespace sonde::examples
