// What record transports write besides text: a binary trace (-b) that `sonde
// report` prints later, JSON lines, a CTF trace babeltrace2 reads, rotated text
// files (-S); clear errors for options that do not go together and for damaged
// traces; and a target that outlives a consumer killed with SIGKILL.
#include "SondeRun.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace sonde::e2e {
namespace {

const std::string kScript =
    "probe begin { printf(\"begin %s\\n\", \"here\") }\n" +
    markProbe(E2E_THREADS, "tick",
              "if ($arg2 % 1000 == 0) printf(\"thread=%d seq=%d tag=%s\\n\", $arg1, $arg2, "
              "\"q\\\"t\")") +
    "probe end { println(\"end\") }\n";
const std::string kCommand = std::string(E2E_THREADS) + " 10000";

std::vector<std::string> sortedLines(const std::string &text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  std::sort(lines.begin(), lines.end());
  return lines;
}

test::ProcessResult runReport(const std::vector<std::string> &args, const std::string &dir) {
  std::vector<std::string> all = {"report"};
  all.insert(all.end(), args.begin(), args.end());
  return test::runProcess(SONDE_BINARY, all, dir, std::chrono::seconds(60));
}

TEST(TraceOutput, BulkTraceReportsTheSameTextInTimeOrder) {
  ScratchDir dir;
  std::string text = dir.file("text.txt"), trace = dir.file("trace");
  auto t = runSonde(kScript, kCommand, dir.path(), {"-o", text});
  auto b = runSonde(kScript, kCommand, dir.path(), {"-b", "-o", trace});
  ASSERT_TRUE(t.exited && t.exitCode == 0) << describeRun(kScript, kCommand, t);
  ASSERT_TRUE(b.exited && b.exitCode == 0) << describeRun(kScript, kCommand, b);
  EXPECT_NE(b.stderrText.find("binary trace in " + trace), std::string::npos) << b.stderrText;
  EXPECT_TRUE(std::filesystem::exists(trace + "/schema"));
  auto r = runReport({trace}, dir.path());
  ASSERT_TRUE(r.exited && r.exitCode == 0) << r.describe() << r.stderrText;
  EXPECT_EQ(sortedLines(r.stdoutText), sortedLines(readFile(text)));
  // Time order across streams: begin first, end last, each thread's lines in order.
  EXPECT_EQ(r.stdoutText.rfind("begin here\n", 0), 0u) << r.stdoutText.substr(0, 200);
  EXPECT_TRUE(r.stdoutText.size() >= 4 &&
              r.stdoutText.compare(r.stdoutText.size() - 4, 4, "end\n") == 0);
  EXPECT_NE(r.stdoutText.find("thread=2 seq=9000 tag=q\"t\n"), std::string::npos);

  auto json = runReport({"--format=json", trace}, dir.path());
  ASSERT_TRUE(json.exited && json.exitCode == 0) << json.stderrText;
  EXPECT_NE(json.stdoutText.find("\"fields\":{\"thread\":2,\"seq\":9000,\"tag\":\"q\\\"t\"}"),
            std::string::npos)
      << json.stdoutText.substr(0, 600);
  EXPECT_EQ(std::count(json.stdoutText.begin(), json.stdoutText.end(), '\n'), 4 * 10 + 2);
}

TEST(TraceOutput, JsonLinesLive) {
  ScratchDir dir;
  std::string out = dir.file("out.json");
  auto r = runSonde(kScript, kCommand, dir.path(), {"--format=json", "-o", out});
  ASSERT_TRUE(r.exited && r.exitCode == 0) << describeRun(kScript, kCommand, r);
  std::string json = readFile(out);
  EXPECT_EQ(std::count(json.begin(), json.end(), '\n'), 42);
  EXPECT_NE(
      json.find("\"probe\":\"begin\",\"format\":\"begin %s\\n\",\"fields\":{\"begin\":\"here\"}"),
      std::string::npos)
      << json.substr(0, 400);
  EXPECT_NE(json.find("\"text\":\"end\\n\"}"), std::string::npos);
  // Every line is JSON (python3 is on every machine the setup script makes).
  auto check = test::runProcess("/usr/bin/python3",
                                {"-c",
                                 "import json,sys\n"
                                 "n=sum(1 for l in open(sys.argv[1]) if json.loads(l))\n"
                                 "print(n)",
                                 out},
                                dir.path(), std::chrono::seconds(30));
  EXPECT_EQ(check.stdoutText, "42\n") << check.stderrText;
}

TEST(TraceOutput, CtfTraceReadByBabeltrace) {
  ScratchDir dir;
  std::string ctf = dir.file("ctf");
  auto r = runSonde(kScript, kCommand, dir.path(), {"--format=ctf", "-o", ctf});
  ASSERT_TRUE(r.exited && r.exitCode == 0) << describeRun(kScript, kCommand, r);
  auto bt = test::runProcess("/usr/bin/babeltrace2", {ctf}, dir.path(), std::chrono::seconds(60));
  ASSERT_TRUE(bt.exited && bt.exitCode == 0) << bt.stderrText;
  std::string mark = "process(\"" + std::string(E2E_THREADS) + "\").mark(\"tick\"): ";
  EXPECT_NE(bt.stdoutText.find("}, { thread = 3, seq = 7000, tag = \"q\\\"t\" }"),
            std::string::npos)
      << bt.stdoutText.substr(0, 800);
  EXPECT_NE(bt.stdoutText.find("begin: { vpid = "), std::string::npos);
  EXPECT_NE(bt.stdoutText.find("}, { begin = \"here\" }"), std::string::npos);
  EXPECT_NE(bt.stdoutText.find("}, { text = \"end\\n\" }"), std::string::npos);
  EXPECT_EQ(std::count(bt.stdoutText.begin(), bt.stdoutText.end(), '\n'), 42);
  // Every event names its process and thread: the target's four threads in
  // one process, each firing thread its own tid; begin ran in sonde.
  std::regex tick(R"(\{ vpid = (\d+), vtid = (\d+) \}, \{ thread = (\d+),)");
  std::set<std::string> pids, tids;
  std::map<std::string, std::set<std::string>> tidsOfThread;
  std::istringstream lines(bt.stdoutText);
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (line.find(mark) == std::string::npos || !std::regex_search(line, m, tick))
      continue;
    pids.insert(m[1]);
    tids.insert(m[2]);
    tidsOfThread[m[3]].insert(m[2]);
  }
  ASSERT_EQ(pids.size(), 1u) << bt.stdoutText.substr(0, 800);
  EXPECT_EQ(tids.size(), 4u);
  EXPECT_EQ(tids.count(*pids.begin()), 0u) << "the firing threads are not the main thread";
  for (const auto &[thread, ids] : tidsOfThread)
    EXPECT_EQ(ids.size(), 1u) << "thread " << thread;
  EXPECT_EQ(bt.stdoutText.find("begin: { vpid = " + *pids.begin() + ","), std::string::npos);
}

TEST(TraceOutput, RotatedTextFilesKeepTheNewest) {
  ScratchDir dir;
  std::string script =
      markProbe(E2E_THREADS, "tick", "printf(\"%d %d ....................\\n\", $arg1, $arg2)");
  std::string out = dir.file("out.txt");
  auto r = runSonde(script, E2E_THREADS, dir.path(), {"-S", "2,3", "-o", out});
  ASSERT_TRUE(r.exited && r.exitCode == 0) << describeRun(script, E2E_THREADS, r);
  std::vector<std::string> parts;
  for (const auto &e : std::filesystem::directory_iterator(dir.path()))
    if (e.path().filename().string().rfind("out.txt.", 0) == 0)
      parts.push_back(e.path().filename().string());
  std::sort(parts.begin(), parts.end());
  ASSERT_EQ(parts.size(), 3u) << "kept files";
  for (const std::string &p : parts) {
    std::string text = readFile(dir.file(p));
    EXPECT_LE(text.size(), (2u << 20) + 65536) << p;
    EXPECT_TRUE(text.empty() || text.back() == '\n') << p << " ends mid-line";
  }
}

TEST(TraceOutput, OptionsThatDoNotGoTogether) {
  ScratchDir dir;
  struct Case {
    std::vector<std::string> options;
    std::string message;
  } cases[] = {
      {{"--transport=text", "-b"}, "option -b needs a record transport"},
      {{"-F", "--mode=discard"}, "option -F keeps the newest records"},
      {{"--format=ctf"}, "option --format=ctf needs -o DIR"},
      {{"-S", "1"}, "option -S rotates a text or JSON output file"},
      {{"-b", "--format=json", "-o", "x"}, "give --format to `sonde report`"},
      {{"--num-subbuf=3"}, "option --num-subbuf: expected a power of two from 2 to 1024"},
      {{"--subbuf-size=3k"}, "option --subbuf-size: expected a power of two up to 64M"},
      {{"--subbuf-size=1k"}, "option --subbuf-size: relay sub-buffers are 4K to 64M"},
      {{"--transport=netlink", "--subbuf-size=128k"}, "a netlink message carries at most 64K"},
      {{"--transport=netlink", "--num-subbuf=4"}, "option --num-subbuf is for the relay"},
      {{"--transport=netlink", "-F"}, "-F and --mode=overwrite need --transport=relay"},
  };
  for (const Case &c : cases) {
    auto r = runSonde(kScript, kCommand, dir.path(), c.options);
    EXPECT_TRUE(r.exited && r.exitCode == 1) << describeRun(kScript, kCommand, r);
    EXPECT_NE(r.stderrText.find(c.message), std::string::npos) << r.stderrText;
  }
}

TEST(TraceOutput, ReportNamesWhatIsWrongWithATrace) {
  ScratchDir dir;
  auto missing = runReport({dir.file("nothing")}, dir.path());
  EXPECT_EQ(missing.exitCode, 1);
  EXPECT_NE(missing.stderrText.find("nothing"), std::string::npos) << missing.stderrText;

  std::string trace = dir.file("trace");
  auto b = runSonde(kScript, kCommand, dir.path(), {"-b", "-o", trace});
  ASSERT_TRUE(b.exited && b.exitCode == 0) << describeRun(kScript, kCommand, b);
  std::string stream;
  for (const auto &e : std::filesystem::directory_iterator(trace))
    if (e.path().filename().string().rfind("stream-", 0) == 0 && e.file_size() > 40)
      stream = e.path().string();
  ASSERT_FALSE(stream.empty());
  // A frame cut short: the records before it are printed, the error names the file.
  std::filesystem::resize_file(stream, std::filesystem::file_size(stream) - 3);
  auto cut = runReport({trace}, dir.path());
  EXPECT_EQ(cut.exitCode, 1);
  EXPECT_NE(cut.stderrText.find(stream + ": frame at offset"), std::string::npos) << cut.stderrText;
  EXPECT_NE(cut.stdoutText.find("begin here\n"), std::string::npos);

  std::ofstream(trace + "/schema") << "sonde-trace-schema 1\nformat\tbegin\n";
  auto schema = runReport({trace}, dir.path());
  EXPECT_EQ(schema.exitCode, 1);
  EXPECT_NE(schema.stderrText.find(trace + "/schema: line 2: expected"), std::string::npos)
      << schema.stderrText;
}

// Whether a child of `parent` has exec'd `program`.
bool runsProgram(pid_t parent, const std::string &program) {
  std::string task = "/proc/" + std::to_string(parent) + "/task";
  std::error_code ec;
  for (const auto &t : std::filesystem::directory_iterator(task, ec)) {
    std::istringstream children(readFile(t.path().string() + "/children"));
    for (pid_t child; children >> child;)
      if (std::filesystem::equivalent("/proc/" + std::to_string(child) + "/exe", program, ec))
        return true;
  }
  return false;
}

// The consumer killed with SIGKILL: producers stop waiting within the block
// timeout, the control pipe's end detaches the agent, and the target finishes.
TEST(TraceOutput, TargetFinishesWhenTheConsumerIsKilled) {
  ScratchDir dir;
  std::string out = dir.file("stdout.txt");
  std::string script = markProbe(E2E_THREADS, "tick", "printf(\"%d %d\\n\", $arg1, $arg2)");
  pid_t sonde = fork();
  ASSERT_GE(sonde, 0);
  if (sonde == 0) {
    int fd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, STDOUT_FILENO);
    dup2(fd, STDERR_FILENO);
    // 100M events cannot all pass through a 1 MB relay in the half second
    // before the kill, even on a fast machine (~12M/s here).
    std::string cmd = std::string(E2E_THREADS) + " 25000000";
    execl(SONDE_BINARY, SONDE_BINARY, "--transport=relay", "-s", "1", "-o", "/dev/null", "-e",
          script.c_str(), "-c", cmd.c_str(), static_cast<char *>(nullptr));
    _exit(127);
  }
  // Killed once the target runs its own program (on a busy machine sonde may
  // take longer than any fixed delay to compile and start it), events flowing.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!runsProgram(sonde, E2E_THREADS) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  kill(sonde, SIGKILL);
  int status = 0;
  waitpid(sonde, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "sonde ended before the kill: " << readFile(out);
  // The target (now an orphan) prints its closing line when it is done.
  std::string text;
  for (int i = 0; i < 900 && text.find("fired 100000000\n") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    text = readFile(out);
  }
  EXPECT_NE(text.find("fired 100000000\n"), std::string::npos) << text;
}

} // namespace
} // namespace sonde::e2e
