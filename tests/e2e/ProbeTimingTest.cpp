// -t (stap's probe hit report): each probe's exact hit count and the time its
// handler took, for markers fired in a traced process (counted in the shared
// segment from several threads at once) and for probes that run in sonde.
#include "SondeRun.h"

#include <gtest/gtest.h>

#include <cinttypes>
#include <cstdio>
#include <map>
#include <sstream>

namespace sonde::e2e {
namespace {

struct ReportLine {
  int64_t hits = -1;
  int64_t min = -1, avg = -1, max = -1;
  std::string location;
};

// The report's lines by probe point: "PP, (LOC), hits: N, ns: AminBavgCmax, ...".
std::map<std::string, ReportLine> hitReport(const std::string &text) {
  std::map<std::string, ReportLine> report;
  std::istringstream in(text);
  std::string line;
  bool inReport = false;
  while (std::getline(in, line)) {
    if (line == "----- probe hit report: ") {
      inReport = true;
      continue;
    }
    size_t open = line.find(", (");
    size_t close = line.find("), hits: ");
    if (!inReport || open == std::string::npos || close == std::string::npos)
      continue;
    ReportLine r;
    r.location = line.substr(open + 3, close - open - 3);
    const char *rest = line.c_str() + close;
    if (std::sscanf(rest, "), hits: %" SCNd64 ", ns: %" SCNd64 "min/%" SCNd64 "avg/%" SCNd64 "max",
                    &r.hits, &r.min, &r.avg, &r.max) < 1)
      continue;
    report[line.substr(0, open)] = r;
  }
  return report;
}

std::string markPoint(const std::string &path, const std::string &name) {
  return "process(\"" + path + "\").mark(\"" + name + "\")";
}

TEST(ProbeTiming, CountsEveryMarkerHitFromEveryThread) {
  ScratchDir dir;
  constexpr long kIterations = 20000; // per thread; e2e_threads runs 4
  std::string script = markProbe(E2E_THREADS, "tick", "n++") +
                       "\nglobal n\nprobe begin { }\nprobe end { printf(\"n=%d\\n\", n) }\n";
  std::string command = std::string(E2E_THREADS) + " " + std::to_string(kIterations);
  auto r = runSonde(script, command, dir.path(), {"-t"});
  ASSERT_TRUE(r.exited && r.exitCode == 0) << describeRun(script, command, r);
  auto report = hitReport(r.stdoutText);
  ASSERT_EQ(report.count(markPoint(E2E_THREADS, "tick")), 1u) << r.stdoutText;
  const ReportLine &tick = report[markPoint(E2E_THREADS, "tick")];
  EXPECT_EQ(tick.hits, 4 * kIterations) << r.stdoutText;
  EXPECT_LE(0, tick.min);
  EXPECT_LE(tick.min, tick.avg);
  EXPECT_LE(tick.avg, tick.max);
  EXPECT_EQ(tick.location, "<input>:1:7") << r.stdoutText;
  EXPECT_EQ(report["begin"].hits, 1) << r.stdoutText;
  EXPECT_EQ(report["end"].hits, 1) << r.stdoutText;
  // The report comes after what end probes print, as in stap.
  EXPECT_LT(r.stdoutText.find("n=80000\n"), r.stdoutText.find("----- probe hit report: "));
}

TEST(ProbeTiming, TimersAndProbesThatNeverRan) {
  ScratchDir dir;
  std::string script = "global n\nprobe timer.ms(1) { n++; if (n == 5) exit() }\n"
                       "probe timer.s(1000) { }\nprobe end { printf(\"n=%d\\n\", n) }\n";
  auto r =
      test::runProcess(SONDE_BINARY, {"-t", "-e", script}, dir.path(), std::chrono::seconds(60));
  ASSERT_TRUE(r.exited && r.exitCode == 0) << describeRun(script, "", r);
  int64_t n = -1;
  ASSERT_EQ(std::sscanf(r.stdoutText.c_str(), "n=%" SCNd64, &n), 1) << r.stdoutText;
  auto report = hitReport(r.stdoutText);
  // Every run of the timer handler, and only those: runs after exit() return
  // before the handler starts, and are not hits.
  EXPECT_EQ(report["timer.ms(1)"].hits, n) << r.stdoutText;
  EXPECT_NE(r.stdoutText.find("timer.s(1000), (<input>:3:7), hits: 0, from: timer.s(1000), "
                              "index: "),
            std::string::npos)
      << r.stdoutText;
  EXPECT_EQ(report["end"].hits, 1) << r.stdoutText;
}

TEST(ProbeTiming, NoReportWithoutTheOption) {
  ScratchDir dir;
  std::string script = markProbe(E2E_THREADS, "tick", "") + "\n";
  std::string command = std::string(E2E_THREADS) + " 100";
  auto r = runSonde(script, command, dir.path());
  ASSERT_TRUE(r.exited && r.exitCode == 0) << describeRun(script, command, r);
  EXPECT_EQ(r.stdoutText.find("probe hit report"), std::string::npos) << r.stdoutText;
}

TEST(ProbeTiming, HandlersCarryNoTimingWithoutTheOption) {
  // The choice is made at compile time: the IR reads the clock only with -t.
  ScratchDir dir;
  const std::string script = "probe begin { exit() }";
  auto plain =
      test::runProcess(SONDE_BINARY, {"-p3", "-e", script}, dir.path(), std::chrono::seconds(60));
  auto timed = test::runProcess(SONDE_BINARY, {"-t", "-p3", "-e", script}, dir.path(),
                                std::chrono::seconds(60));
  ASSERT_EQ(plain.exitCode, 0) << plain.stderrText;
  ASSERT_EQ(timed.exitCode, 0) << timed.stderrText;
  EXPECT_EQ(plain.stdoutText.find("sonde_fn_local_clock_ns_0"), std::string::npos);
  EXPECT_NE(timed.stdoutText.find("sonde_fn_local_clock_ns_0"), std::string::npos);
}

} // namespace
} // namespace sonde::e2e
