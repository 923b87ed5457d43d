// The relay transport end to end: records from 4 target threads through shared
// rings, drained by sonde; nothing lost in block mode, exact loss counts in
// discard mode, the newest records in overwrite mode (-F), each thread's records
// in its order, and the same text as the text transport.
#include "SondeRun.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cinttypes>
#include <map>
#include <sstream>

namespace sonde::e2e {
namespace {

const std::string kTickScript =
    markProbe(E2E_THREADS, "tick", "printf(\"%d %d\\n\", $arg1, $arg2)") + "\n";

// Lines "THREAD SEQ" per thread: each thread's sequence numbers, in output order.
std::map<long, std::vector<long>> threadSequences(const std::string &text) {
  std::map<long, std::vector<long>> seqs;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    long id = 0, seq = 0;
    if (std::sscanf(line.c_str(), "%ld %ld", &id, &seq) == 2)
      seqs[id].push_back(seq);
  }
  return seqs;
}

// The numbers of the closing summary "KIND transport (MODE mode): N records, ... L lost".
bool summaryCounts(const std::string &stderrText, uint64_t &records, uint64_t &lost) {
  size_t at = stderrText.find(" transport (");
  if (at == std::string::npos)
    return false;
  size_t colon = stderrText.find("): ", at);
  return colon != std::string::npos &&
         std::sscanf(stderrText.c_str() + colon,
                     "): %" SCNu64 " records, %*u bytes, %*f MB/s, %" SCNu64 " lost", &records,
                     &lost) == 2;
}

TEST(RelayTransport, BlockModeDeliversFourTimesFiveMillionInThreadOrder) {
  ScratchDir dir;
  // -o: the target's own stdout shares no pipe with the records (a pipe write
  // over 4 KiB is not atomic, so lines of two processes could interleave).
  std::string out = dir.file("relay.txt");
  std::string cmd = std::string(E2E_THREADS) + " 5000000";
  auto r = runSonde(kTickScript, cmd, dir.path(), {"--transport=relay", "-o", out});
  ASSERT_TRUE(r.exited && r.exitCode == 0) << describeRun(kTickScript, cmd, r);
  EXPECT_EQ(r.stdoutText, "fired 20000000\n");
  auto seqs = threadSequences(readFile(out));
  ASSERT_EQ(seqs.size(), 4u);
  for (const auto &[id, seq] : seqs) {
    ASSERT_EQ(seq.size(), 5000000u) << "thread " << id;
    for (size_t i = 0; i < seq.size(); ++i)
      ASSERT_EQ(seq[i], long(i)) << "thread " << id << " out of order";
  }
  uint64_t records = 0, lost = 1;
  ASSERT_TRUE(summaryCounts(r.stderrText, records, lost)) << r.stderrText;
  EXPECT_EQ(records, 20000000u);
  EXPECT_EQ(lost, 0u);
}

TEST(NetlinkTransport, BlockModeDeliversEveryRecordInThreadOrder) {
  ScratchDir dir;
  std::string out = dir.file("netlink.txt");
  auto r =
      runSonde(kTickScript, E2E_THREADS, dir.path(), {"--transport=netlink", "-s", "1", "-o", out});
  ASSERT_TRUE(r.exited && r.exitCode == 0) << describeRun(kTickScript, E2E_THREADS, r);
  auto seqs = threadSequences(readFile(out));
  ASSERT_EQ(seqs.size(), 4u);
  for (const auto &[id, seq] : seqs) {
    ASSERT_EQ(seq.size(), 1000000u) << "thread " << id;
    for (size_t i = 0; i < seq.size(); ++i)
      ASSERT_EQ(seq[i], long(i)) << "thread " << id << " out of order";
  }
  EXPECT_NE(r.stderrText.find("netlink transport (block mode): 4000000 records"), std::string::npos)
      << r.stderrText;
}

class DiscardMode : public ::testing::TestWithParam<const char *> {};

TEST_P(DiscardMode, CountsEveryLostRecord) {
  ScratchDir dir;
  std::string out = dir.file("discard.txt");
  auto r =
      runSonde(kTickScript, E2E_THREADS, dir.path(),
               {std::string("--transport=") + GetParam(), "--mode=discard", "-s", "1", "-o", out});
  ASSERT_TRUE(r.exited && r.exitCode == 0) << describeRun(kTickScript, E2E_THREADS, r);
  uint64_t records = 0, lost = 0;
  ASSERT_TRUE(summaryCounts(r.stderrText, records, lost)) << r.stderrText;
  auto seqs = threadSequences(readFile(out));
  uint64_t delivered = 0;
  for (const auto &[id, seq] : seqs) {
    delivered += seq.size();
    for (size_t i = 1; i < seq.size(); ++i)
      ASSERT_LT(seq[i - 1], seq[i]) << "thread " << id << " out of order";
  }
  EXPECT_EQ(delivered, records);
  EXPECT_EQ(delivered + lost, 4000000u) << r.stderrText;
  EXPECT_GT(lost, 0u) << "a 1 MB buffer should not hold 4M records";
}

INSTANTIATE_TEST_SUITE_P(Transports, DiscardMode, ::testing::Values("relay", "netlink"));

TEST(RelayTransport, FlightRecorderKeepsTheNewestRecords) {
  ScratchDir dir;
  std::string out = dir.file("flight.txt");
  auto r = runSonde(kTickScript, E2E_THREADS, dir.path(), {"-F", "-s", "1", "-o", out});
  ASSERT_TRUE(r.exited && r.exitCode == 0) << describeRun(kTickScript, E2E_THREADS, r);
  EXPECT_NE(r.stderrText.find("overwrite mode"), std::string::npos) << r.stderrText;
  auto seqs = threadSequences(readFile(out));
  ASSERT_EQ(seqs.size(), 4u);
  for (const auto &[id, seq] : seqs) {
    ASSERT_FALSE(seq.empty());
    ASSERT_LT(seq.size(), 1000000u) << "thread " << id << ": nothing was overwritten";
    // A contiguous run that ends with the thread's last record.
    EXPECT_EQ(seq.back(), 999999) << "thread " << id;
    for (size_t i = 1; i < seq.size(); ++i)
      ASSERT_EQ(seq[i], seq[i - 1] + 1) << "thread " << id << " has a gap";
  }
}

// print/println travel as text records, printf as binary ones: their order in a
// thread is kept, and the output equals the text transport's. The parameter is
// the transport and, for netlink, the batch ("1": one record per message).
class RecordTransport : public ::testing::TestWithParam<const char *> {};

std::vector<std::string> transportOptions(const std::string &param) {
  size_t colon = param.find(':');
  std::vector<std::string> options{"--transport=" + param.substr(0, colon)};
  if (colon != std::string::npos)
    options.push_back("--subbuf-size=" + param.substr(colon + 1));
  return options;
}

TEST_P(RecordTransport, SameTextAsTheTextTransport) {
  ScratchDir dir;
  std::string script =
      "global n\n" +
      markProbe(E2E_THREADS, "tick",
                "if ($arg1 == 0 && $arg2 < 3) { println(\"line \", $arg2); "
                "printf(\"%5d|%-4s|%x|%c\\n\", $arg2, \"ab\", $arg2 * 255, 65 + $arg2); "
                "print(\"raw\\n\") } n++") +
      "probe end { printf(\"n=%d\\n\", n) }\n";
  std::string textOut = dir.file("text.txt"), relayOut = dir.file("relay.txt");
  auto text = runSonde(script, E2E_THREADS, dir.path(), {"-o", textOut});
  std::vector<std::string> options = transportOptions(GetParam());
  options.insert(options.end(), {"-o", relayOut});
  auto relay = runSonde(script, E2E_THREADS, dir.path(), options);
  ASSERT_TRUE(text.exited && text.exitCode == 0) << describeRun(script, E2E_THREADS, text);
  ASSERT_TRUE(relay.exited && relay.exitCode == 0) << describeRun(script, E2E_THREADS, relay);
  EXPECT_EQ(readFile(relayOut), readFile(textOut));
  EXPECT_NE(readFile(textOut).find("line 2\n    2|ab  |1fe|C\nraw\n"), std::string::npos)
      << readFile(textOut);
}

// Numeric printfs append their records inline (generated code), the rest go
// through the runtime: numbers of every varint width, text between them, and
// sub-buffers of 4 KiB, so thousands of sub-buffer changes.
TEST(RelayTransport, InlineRecordsGiveTheTextTransportsOutput) {
  ScratchDir dir;
  std::string script =
      markProbe(E2E_RECORDS, "value", "printf(\"%d %x %d\\n\", $arg1, $arg1, $arg1 * 3)") + "\n" +
      markProbe(E2E_RECORDS, "note", "println(\"note \", $arg1)") + "\n";
  std::string textOut = dir.file("text.txt"), relayOut = dir.file("relay.txt");
  auto text = runSonde(script, E2E_RECORDS, dir.path(), {"-o", textOut});
  auto relay = runSonde(script, E2E_RECORDS, dir.path(),
                        {"--transport=relay", "--subbuf-size=4096", "-o", relayOut});
  ASSERT_TRUE(text.exited && text.exitCode == 0) << describeRun(script, E2E_RECORDS, text);
  ASSERT_TRUE(relay.exited && relay.exitCode == 0) << describeRun(script, E2E_RECORDS, relay);
  std::string expected = readFile(textOut);
  EXPECT_EQ(readFile(relayOut), expected);
  EXPECT_NE(expected.find("-1 ffffffffffffffff -3\nnote 5000\n"), std::string::npos);
  EXPECT_NE(expected.find("\n-9223372036854775808 8000000000000000 -9223372036854775808\n"),
            std::string::npos)
      << expected.substr(0, 2000);
  uint64_t records = 0, lost = 1;
  ASSERT_TRUE(summaryCounts(relay.stderrText, records, lost)) << relay.stderrText;
  EXPECT_EQ(records, 20000u + 4u); // the values and the notes
  EXPECT_EQ(lost, 0u);
}

// The record time (gettimeofday_ns() as an argument) against the target's own
// CLOCK_REALTIME read just before the marker: never earlier, in order, and
// close, also after the 2 ms pauses that need a full timestamp.
TEST(RelayTransport, InlineRecordTimesFollowTheTargetsClock) {
  ScratchDir dir;
  std::string script =
      markProbe(E2E_RECORDS, "value", "printf(\"%d %d\\n\", $arg2, gettimeofday_ns())") + "\n";
  std::string out = dir.file("times.txt");
  auto r = runSonde(script, E2E_RECORDS, dir.path(), {"--transport=relay", "-o", out});
  ASSERT_TRUE(r.exited && r.exitCode == 0) << describeRun(script, E2E_RECORDS, r);
  std::istringstream lines(readFile(out));
  std::string line;
  std::vector<long long> gaps;
  long long previous = 0;
  while (std::getline(lines, line)) {
    long long target = 0, recorded = 0;
    ASSERT_EQ(std::sscanf(line.c_str(), "%lld %lld", &target, &recorded), 2) << line;
    // The calibration of the TSC against CLOCK_REALTIME is good to a few us.
    EXPECT_GT(recorded - target, -20000) << line;
    EXPECT_GE(recorded, previous) << line;
    previous = recorded;
    gaps.push_back(recorded - target);
  }
  ASSERT_EQ(gaps.size(), 20000u);
  std::sort(gaps.begin(), gaps.end());
  EXPECT_LT(gaps[gaps.size() / 2], 100000) << "median ns from the target's clock to the record's";
}

INSTANTIATE_TEST_SUITE_P(Transports, RecordTransport,
                         ::testing::Values("relay", "netlink", "netlink:1"));

} // namespace
} // namespace sonde::e2e
