// The relay transport end to end: records from 4 target threads through shared
// rings, formatted by sonde; nothing lost, each thread's records in its order,
// and the same text as the text transport.
#include "SondeRun.h"

#include <gtest/gtest.h>

#include <map>
#include <sstream>

namespace sonde::e2e {
namespace {

TEST(RelayTransport, FourThreadsDeliverEveryRecordInThreadOrder) {
  ScratchDir dir;
  std::string script =
      markProbe(E2E_THREADS, "tick", "printf(\"%d %d\\n\", $arg1, $arg2)") + "\n";
  // -o: the target's own stdout shares no pipe with the records (a pipe write
  // over 4 KiB is not atomic, so lines of two processes could interleave).
  std::string out = dir.file("relay.txt");
  auto r = runSonde(script, E2E_THREADS, dir.path(), {"--transport=relay", "-v", "-o", out});
  ASSERT_TRUE(r.exited && r.exitCode == 0) << describeRun(script, E2E_THREADS, r);
  EXPECT_EQ(r.stdoutText, "fired 4000000\n");
  std::map<long, long> next; // thread id -> the sequence number it must print next
  std::istringstream lines(readFile(out));
  std::string line;
  long records = 0;
  while (std::getline(lines, line)) {
    long id = 0, seq = 0;
    ASSERT_EQ(std::sscanf(line.c_str(), "%ld %ld", &id, &seq), 2) << line;
    ASSERT_EQ(seq, next[id]) << "thread " << id << " out of order";
    next[id] = seq + 1;
    ++records;
  }
  EXPECT_EQ(records, 4000000);
  EXPECT_EQ(next.size(), 4u);
  EXPECT_NE(r.stderrText.find("relay transport: 4000000 records"), std::string::npos)
      << r.stderrText;
  EXPECT_EQ(r.stderrText.find("records lost"), std::string::npos) << r.stderrText;
}

// print/println travel as text records, printf as binary ones: their order in a
// thread is kept, and the output equals the text transport's.
TEST(RelayTransport, SameTextAsTheTextTransport) {
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
  auto relay = runSonde(script, E2E_THREADS, dir.path(), {"--transport=relay", "-o", relayOut});
  ASSERT_TRUE(text.exited && text.exitCode == 0) << describeRun(script, E2E_THREADS, text);
  ASSERT_TRUE(relay.exited && relay.exitCode == 0) << describeRun(script, E2E_THREADS, relay);
  EXPECT_EQ(readFile(relayOut), readFile(textOut));
  EXPECT_NE(readFile(textOut).find("line 2\n    2|ab  |1fe|C\nraw\n"), std::string::npos)
      << readFile(textOut);
}

} // namespace
} // namespace sonde::e2e
