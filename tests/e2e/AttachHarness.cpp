#include "AttachHarness.h"

namespace sonde::e2e {

pid_t spawnWithStdoutPipe(const std::string &program, std::vector<std::string> args, int *out) {
  int pipeFds[2];
  if (pipe2(pipeFds, O_CLOEXEC) != 0)
    return -1;
  pid_t pid = fork();
  if (pid == 0) {
    dup2(pipeFds[1], STDOUT_FILENO);
    std::vector<char *> argv{const_cast<char *>(program.c_str())};
    for (auto &a : args)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(program.c_str(), argv.data());
    _exit(127);
  }
  close(pipeFds[1]);
  *out = pipeFds[0];
  return pid;
}

namespace {

// What every attached run prints at its end: how many threads fired each
// marker, how many values were wrong, and target().
const char *kCountingScript = R"(
global seen, stock, wrong
probe process.provider("attach").mark("tick") {
  seen[$arg1] <<< 1
  if ($arg3 != $arg2 * 7) wrong++
}
probe process.provider("attach_stock").mark("tick") { stock[$arg1] <<< 1 }
probe timer.ms(MS) { exit() }
probe end {
  n = 0; foreach (k in seen) n++
  s = 0; foreach (k in stock) s++
  printf("threads %d stock %d wrong %d target %d\n", n, s, wrong, target())
}
)";

} // namespace

std::string countingScript(int ms) {
  std::string s = kCountingScript;
  s.replace(s.find("MS"), 2, std::to_string(ms));
  return s;
}

test::ProcessResult attach(const std::string &script, const std::vector<std::string> &options,
                           const std::string &dir) {
  std::vector<std::string> args = options;
  args.insert(args.end(), {"-e", script});
  return test::runProcess(SONDE_BINARY, args, dir, 60s);
}

std::string describe(const test::ProcessResult &r) {
  return r.describe() + "\nstdout:\n" + r.stdoutText + "stderr:\n" + r.stderrText;
}

void expectAllThreadsOk(RunningTarget &target, int threads) {
  auto [text, status] = target.stop();
  EXPECT_EQ(status, 0) << text;
  for (int k = 0; k < threads; ++k)
    EXPECT_NE(text.find("thread " + std::to_string(k) + ": ok\n"), std::string::npos) << text;
}

} // namespace sonde::e2e
