// Every record is delivered or counted as lost whatever the consumer does
// (issue 19): sonde stopped with SIGSTOP from before the target's first event
// until after the target has exited, on each record transport in block and
// discard mode; and the flight recorder's counts (-F), where records =
// overwritten + written.
#include "OutputTestSupport.h"

#include <gtest/gtest.h>

#include <csignal>
#include <fstream>
#include <ostream>

namespace sonde::e2e {
namespace {

const std::string kFloodScript = markProbe(E2E_FLOOD, "tick", "printf(\"%d %d\\n\", $arg1, $arg2)");

struct StallCase {
  const char *transport;
  const char *mode;
};

void PrintTo(const StallCase &c, std::ostream *out) { *out << c.transport << " " << c.mode; }

class ConsumerStall : public ::testing::TestWithParam<StallCase> {};

TEST_P(ConsumerStall, EveryRecordIsDeliveredOrCounted) {
  ScratchDir dir;
  std::string out = dir.file("out.txt");
  std::string command = std::string(E2E_FLOOD) + " 4 500000 " + dir.path() + " wait";
  // -s 1: a queue far smaller than what the target fires while sonde is stopped.
  BackgroundSonde sonde({std::string("--transport=") + GetParam().transport,
                         std::string("--mode=") + GetParam().mode, "-s", "1", "-o", out, "-e",
                         kFloodScript, "-c", command},
                        dir.path());
  ASSERT_GT(sonde.pid(), 0);
  pid_t target = 0;
  ASSERT_TRUE(waitFor([&] { return std::ifstream(dir.file("ready")) >> target && target > 0; },
                      std::chrono::seconds(30)))
      << "the target never started: " << readFile(dir.file("sonde.stderr"));
  ASSERT_EQ(::kill(sonde.pid(), SIGSTOP), 0);
  std::ofstream(dir.file("go")) << "go\n";
  // The target fires everything and exits (a zombie: sonde cannot reap it yet).
  bool exited = waitFor([&] { return processExited(target); }, std::chrono::seconds(60));
  ASSERT_EQ(::kill(sonde.pid(), SIGCONT), 0);
  ASSERT_TRUE(exited) << "the target did not exit while sonde was stopped";
  test::ProcessResult r = sonde.wait(std::chrono::seconds(60));
  ASSERT_TRUE(r.exited && r.exitCode == 0) << r.describe() << "\n" << r.stderrText;
  uint64_t fired = firedEvents(dir);
  ASSERT_EQ(fired, 2000000u);
  uint64_t lost = 0;
  ASSERT_TRUE(summaryLost(r.stderrText, lost)) << r.stderrText;
  uint64_t delivered = completeLines(readFile(out));
  EXPECT_EQ(delivered + lost, fired) << "delivered " << delivered << ", lost " << lost << "\n"
                                     << r.stderrText;
  EXPECT_GT(lost, 0u) << "a 1 MB buffer held every record: the stall was not tested";
}

INSTANTIATE_TEST_SUITE_P(
    Transports, ConsumerStall,
    ::testing::Values(StallCase{"relay", "block"}, StallCase{"relay", "discard"},
                      StallCase{"netlink", "block"}, StallCase{"netlink", "discard"}),
    [](const auto &info) { return std::string(info.param.transport) + "_" + info.param.mode; });

// -F keeps the newest records: each record is either overwritten or written
// out at exit, exactly, also in the rings of threads that have ended.
TEST(FlightRecorder, RecordsAreOverwrittenOrWritten) {
  ScratchDir dir;
  std::string out = dir.file("out.txt");
  std::string command = std::string(E2E_FLOOD) + " 4 250000 " + dir.path();
  auto r = runSonde(kFloodScript, command, dir.path(), {"-F", "-s", "1", "-o", out});
  ASSERT_TRUE(r.exited && r.exitCode == 0) << describeRun(kFloodScript, command, r);
  uint64_t records = 0, lost = 0, overwritten = 0;
  ASSERT_TRUE(summaryCounts(r.stderrText, records, lost, overwritten)) << r.stderrText;
  uint64_t written = completeLines(readFile(out));
  EXPECT_EQ(lost, 0u) << r.stderrText;
  EXPECT_EQ(records, firedEvents(dir)) << r.stderrText;
  EXPECT_GT(overwritten, 0u) << r.stderrText;
  EXPECT_EQ(records, overwritten + written)
      << "overwritten " << overwritten << ", written " << written << "\n"
      << r.stderrText;
}

} // namespace
} // namespace sonde::e2e
