// A traced process that writes over what it shares with sonde (the state
// segment, the relay rings): sonde must end the session with an error naming
// what was corrupt, within its time bound, never by a signal, and without
// flooding its output.
#include "SondeRun.h"

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <algorithm>
#include <string>
#include <vector>

namespace sonde::e2e {
namespace {

// Globals of every kind, written at the target's markers and read by a timer
// in sonde while the target scribbles; records on the relay transport.
std::string script() {
  return "global n, s, byNumber, byName, samples, perKey\n" +
         markProbe(E2E_SCRIBBLE, "work",
                   "n++; s = sprintf(\"v%d\", $arg1); byNumber[$arg1 % 64] += $arg2; "
                   "byName[sprintf(\"k%d\", $arg1 % 32)] = s; samples <<< $arg2; "
                   "perKey[$arg1 % 8] <<< $arg1; printf(\"%d %d\\n\", $arg1, $arg2)") +
         "probe timer.ms(20) {\n"
         "  n++; s .= \"x\"; total = @count(samples)\n"
         "  foreach (k in byNumber) total += byNumber[k]\n"
         "  foreach (name+ in byName) total += strlen(byName[name])\n"
         "  foreach (k in perKey-) total += @count(perKey[k])\n"
         "  if (total < 0) println(total)\n"
         "}\n"
         "probe end {\n"
         "  printf(\"n=%d s=%s\\n\", n, s)\n"
         "  if (@count(samples)) print(@hist_log(samples))\n"
         "  foreach (k in perKey) print(@hist_log(perKey[k]))\n"
         "  foreach (name in byName) printf(\"%s=%s\\n\", name, byName[name])\n"
         "}\n";
}

struct Scribble {
  std::string what, pattern;
  int seed;
  // What sonde's error must name: one of these (the whole segment or channel
  // written over, sonde may first meet the damage in its header or past it).
  std::vector<std::string> named;
};

void PrintTo(const Scribble &s, std::ostream *os) {
  *os << s.what << " " << s.pattern << " " << s.seed;
}

std::string nameOf(const testing::TestParamInfo<Scribble> &info) {
  return info.param.what + "_" + info.param.pattern + "_" + std::to_string(info.param.seed);
}

class Corruption : public testing::TestWithParam<Scribble> {};

// The bound on a run: sonde checks what targets write at least every 100 ms.
constexpr std::chrono::seconds kRunBound{30};
// Far more than the records and the end-of-run output take.
constexpr off_t kOutputBound = 1 << 20;

TEST_P(Corruption, EndsTheSessionNamingWhatWasCorrupt) {
  const Scribble &p = GetParam();
  ScratchDir dir;
  std::string out = dir.file("out.txt");
  std::string command =
      std::string(E2E_SCRIBBLE) + " " + p.what + " " + p.pattern + " " + std::to_string(p.seed);
  std::vector<std::string> args = {"--transport=relay", "-o", out, "-e", script(), "-c", command};
  test::ProcessResult r = test::runProcess(SONDE_BINARY, args, dir.path(), kRunBound);
  std::string run = describeRun(script(), command, r);
  ASSERT_TRUE(r.exited) << run;
  EXPECT_NE(r.exitCode, 0) << run;
  std::string prefix = "sonde: ERROR: a traced process wrote over memory sonde reads: ";
  size_t at = r.stderrText.find(prefix);
  ASSERT_NE(at, std::string::npos) << run;
  EXPECT_TRUE(std::any_of(p.named.begin(), p.named.end(), [&](const std::string &named) {
    return r.stderrText.compare(at + prefix.size(), named.size(), named) == 0;
  })) << run;
  struct stat st {};
  ASSERT_EQ(stat(out.c_str(), &st), 0) << run;
  EXPECT_LT(st.st_size, kOutputBound) << run;
  // Counters read back from damaged rings are the process's, not sonde's.
  if (r.stderrText.compare(at + prefix.size(), 5, "relay") == 0)
    EXPECT_NE(r.stderrText.find("transport (block mode): counts not shown"), std::string::npos)
        << run;
}

// The flight recorder keeps every record in the rings until it dumps them:
// records written over meanwhile are found when the dump decodes them.
TEST(CorruptionFlightRecorder, RecordsWrittenOverAreFoundInTheDump) {
  ScratchDir dir;
  std::string command = std::string(E2E_SCRIBBLE) + " relaydata random 1";
  std::vector<std::string> args = {"-F", "-o", dir.file("out.txt"), "-e", script(), "-c", command};
  test::ProcessResult r = test::runProcess(SONDE_BINARY, args, dir.path(), kRunBound);
  std::string run = describeRun(script(), command, r);
  ASSERT_TRUE(r.exited) << run;
  EXPECT_NE(r.exitCode, 0) << run;
  EXPECT_NE(r.stderrText.find("sonde: ERROR: a traced process wrote over memory sonde reads: "
                              "relay ring "),
            std::string::npos)
      << run;
}

// A request in the segment's mailbox that the script never makes (it calls
// no system()) was forged: sonde runs nothing, and says so.
TEST(CorruptionMailbox, AForgedSystemRequestIsNotRun) {
  ScratchDir dir;
  std::string forged = dir.file("forged");
  std::string command = std::string(E2E_SCRIBBLE) + " mailbox 'touch " + forged + "' 0";
  std::vector<std::string> args = {"--transport=relay", "-e", script(), "-c", command};
  test::ProcessResult r = test::runProcess(SONDE_BINARY, args, dir.path(), kRunBound);
  std::string run = describeRun(script(), command, r);
  ASSERT_TRUE(r.exited) << run;
  EXPECT_NE(r.exitCode, 0) << run;
  EXPECT_NE(r.stderrText.find("sonde: ERROR: a traced process wrote over memory sonde reads: the "
                              "state segment's header: its mailbox holds a request of kind 1, "
                              "which the script never makes"),
            std::string::npos)
      << run;
  struct stat st {};
  EXPECT_NE(stat(forged.c_str(), &st), 0) << "the forged command ran";
}

// Text sonde shared once (the time zone's name) is read no further than its
// field, whatever a target wrote there and after it.
TEST(CorruptionZone, TheZoneNameStaysInItsField) {
  ScratchDir dir;
  std::string command = std::string(E2E_SCRIBBLE) + " zone - 0";
  std::string zone = markProbe(E2E_SCRIBBLE, "work", "n++") +
                     "global n\nprobe timer.ms(20) { printf(\"zone %d\\n\", strlen(tz_name())) }\n";
  std::vector<std::string> args = {"-e", zone, "-c", command};
  test::ProcessResult r = test::runProcess(SONDE_BINARY, args, dir.path(), kRunBound);
  std::string run = describeRun(zone, command, r);
  ASSERT_TRUE(r.exited) << run;
  size_t longest = 0;
  for (const std::string &line : test::linesOf(r.stdoutText))
    if (line.rfind("zone ", 0) == 0)
      longest = std::max<size_t>(longest, std::stoul(line.substr(5)));
  EXPECT_EQ(longest, 32u) << run; // the field's size (values::SessionFacts::tzName)
}

// The agent's status pipe is the target's to write too (a static program keeps
// it open): a line of 8 MiB is cut to its first 4 KiB, and what follows it
// still gets through.
TEST(CorruptionReports, AnOverlongReportLineIsCut) {
  ScratchDir dir;
  std::string command = E2E_REPORT_FLOOD;
  std::string flooded = "probe process(\"" + command + "\").begin { printf(\"started\\n\") }\n";
  std::vector<std::string> args = {"-o", dir.file("out.txt"), "-e", flooded, "-c", command};
  test::ProcessResult r = test::runProcess(SONDE_BINARY, args, dir.path(), kRunBound);
  std::string run = describeRun(flooded, command, r).substr(0, 2000);
  ASSERT_TRUE(r.exited) << run;
  EXPECT_EQ(r.exitCode, 0) << run;
  EXPECT_LT(r.stderrText.size(), 16u * 1024) << run;
  EXPECT_NE(r.stderrText.find(": " + std::string(4096, 'x') + "\n"), std::string::npos) << run;
  EXPECT_NE(r.stderrText.find(": after the flood\n"), std::string::npos) << run;
}

INSTANTIATE_TEST_SUITE_P(
    Patterns, Corruption,
    testing::Values(Scribble{"state", "random", 1, {"the state segment's header", "global '"}},
                    Scribble{"state", "random", 2, {"the state segment's header", "global '"}},
                    Scribble{"state", "ones", 0, {"the state segment's header", "global '"}},
                    Scribble{"state", "zeros", 0, {"the state segment's header", "global '"}},
                    Scribble{"globals", "random", 1, {"global '"}},
                    Scribble{"globals", "random", 2, {"global '"}},
                    Scribble{"globals", "random", 3, {"global '"}},
                    Scribble{"globals", "ones", 0, {"global '"}},
                    Scribble{"globals", "huge", 1, {"global '"}},
                    Scribble{"relay", "random", 1, {"the relay channel's header", "relay ring "}},
                    Scribble{"relay", "random", 2, {"the relay channel's header", "relay ring "}},
                    Scribble{"relay", "ones", 0, {"the relay channel's header", "relay ring "}},
                    Scribble{"relay", "zeros", 0, {"the relay channel's header", "relay ring "}},
                    Scribble{"relay", "huge", 1, {"relay ring "}}),
    nameOf);

} // namespace
} // namespace sonde::e2e
