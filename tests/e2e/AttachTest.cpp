// sonde -x PID and process(PID): the agent loaded into a running process
// (e2e_attach), its markers fired with the right values, and every detach
// (exit(), Ctrl-C, sonde killed) leaving the process running as before, over
// repeated attach/detach cycles and under load.
#include "AttachHarness.h"

namespace sonde::e2e {
namespace {

TEST(Attach, MarkersOfARunningProcessFireWithTheirValues) {
  ScratchDir dir;
  RunningTarget target(4);
  ASSERT_TRUE(target.waitFor("ready"));
  std::string before = target.footprint();
  auto r = attach(countingScript(300), {"-x", target.pidText()}, dir.path());
  ASSERT_TRUE(r.exited && r.exitCode == 0) << describe(r);
  EXPECT_EQ(r.stdoutText, "threads 4 stock 4 wrong 0 target " + target.pidText() + "\n")
      << describe(r);
  // The agent's thread has gone and the module is unmapped; the agent itself stays.
  EXPECT_EQ(target.settledFootprint(before), before);
  expectAllThreadsOk(target, 4);
}

TEST(Attach, ProcessPidNamesTheProcessWithoutX) {
  ScratchDir dir;
  RunningTarget target(2);
  ASSERT_TRUE(target.waitFor("ready"));
  std::string script =
      "probe process(" + target.pidText() +
      R"().provider("attach").mark("tick") { if ($arg1 == 1) { printf("%d %d\n", target(), $arg3 == $arg2 * 7); exit() } })";
  auto r = attach(script, {}, dir.path());
  ASSERT_TRUE(r.exited && r.exitCode == 0) << describe(r);
  EXPECT_EQ(r.stdoutText, target.pidText() + " 1\n") << describe(r);
  expectAllThreadsOk(target, 2);
}

TEST(Attach, TenCyclesLeaveTheProcessAsItWas) {
  ScratchDir dir;
  RunningTarget target(4);
  ASSERT_TRUE(target.waitFor("ready"));
  std::string before = target.footprint();
  for (int cycle = 0; cycle < 10; ++cycle) {
    auto r = attach(countingScript(100), {"-x", target.pidText()}, dir.path());
    ASSERT_TRUE(r.exited && r.exitCode == 0) << "cycle " << cycle << ": " << describe(r);
    EXPECT_EQ(r.stdoutText, "threads 4 stock 4 wrong 0 target " + target.pidText() + "\n")
        << "cycle " << cycle;
  }
  EXPECT_EQ(target.settledFootprint(before), before);
  expectAllThreadsOk(target, 4);
}

// Four threads fire continuously while sonde attaches and detaches 100 times:
// every run sees right values, the process never sees a wrong one.
TEST(Attach, HundredCyclesUnderLoad) {
  ScratchDir dir;
  RunningTarget target(4);
  ASSERT_TRUE(target.waitFor("ready"));
  for (int cycle = 0; cycle < 100; ++cycle) {
    auto r = attach(countingScript(10), {"-x", target.pidText()}, dir.path());
    ASSERT_TRUE(r.exited && r.exitCode == 0) << "cycle " << cycle << ": " << describe(r);
    ASSERT_NE(r.stdoutText.find(" wrong 0 target " + target.pidText()), std::string::npos)
        << "cycle " << cycle << ": " << describe(r);
  }
  expectAllThreadsOk(target, 4);
}

const char *kAnnounceScript = R"(
global said
probe process.provider("attach").mark("tick") { if (!said) { said = 1; println("attached") } }
)";

TEST(Attach, KilledSondeDetachesAndTheNextAttachWorks) {
  ScratchDir dir;
  RunningTarget target(4);
  ASSERT_TRUE(target.waitFor("ready"));
  std::string before = target.footprint();
  {
    BackgroundSonde sonde(kAnnounceScript, {"-x", target.pidText()});
    ASSERT_TRUE(sonde.printed("attached"));
    EXPECT_FALSE(target.codeAsInFile()) << "attached, the markers are patched";
    sonde.stop(SIGKILL);
  }
  EXPECT_EQ(target.settledFootprint(before, 5s), before)
      << "the agent did not detach when sonde died";
  auto r = attach(countingScript(100), {"-x", target.pidText()}, dir.path());
  ASSERT_TRUE(r.exited && r.exitCode == 0) << describe(r);
  EXPECT_EQ(r.stdoutText, "threads 4 stock 4 wrong 0 target " + target.pidText() + "\n");
  expectAllThreadsOk(target, 4);
}

TEST(Attach, InterruptDetachesAndRunsEndProbes) {
  RunningTarget target(2);
  ASSERT_TRUE(target.waitFor("ready"));
  BackgroundSonde sonde(std::string(kAnnounceScript) + R"(probe end { println("end ran") })",
                        {"-x", target.pidText()});
  ASSERT_TRUE(sonde.printed("attached"));
  int status = sonde.stop(SIGINT);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_TRUE(sonde.printed("end ran"));
  expectAllThreadsOk(target, 2);
}

TEST(Attach, ListingNamesTheProcessesMarkers) {
  ScratchDir dir;
  RunningTarget target(1);
  ASSERT_TRUE(target.waitFor("ready"));
  auto r = test::runProcess(SONDE_BINARY, {"-l", "process(" + target.pidText() + ").mark(\"*\")"},
                            dir.path(), 60s);
  ASSERT_EQ(r.exitCode, 0) << describe(r);
  std::string exe = std::filesystem::canonical(E2E_ATTACH).string();
  // Two providers share the name, so each line names its provider.
  EXPECT_EQ(r.stdoutText, "process(\"" + exe + "\").provider(\"attach\").mark(\"tick\")\n" +
                              "process(\"" + exe +
                              "\").provider(\"attach_stock\").mark(\"tick\")\n")
      << describe(r);
  expectAllThreadsOk(target, 1);
}

TEST(AttachErrors, NoSuchProcess) {
  ScratchDir dir;
  auto r = attach(R"(probe process.mark("tick") {})", {"-x", "999999999"}, dir.path());
  EXPECT_EQ(r.exitCode, 1) << describe(r);
  EXPECT_EQ(r.stderrText, "sonde: option -x: no such process 999999999\n");
}

TEST(AttachErrors, StoppedProcess) {
  ScratchDir dir;
  RunningTarget target(1);
  ASSERT_TRUE(target.waitFor("ready"));
  kill(target.pid(), SIGSTOP);
  auto stopped = std::chrono::steady_clock::now() + 5s;
  while (readFile("/proc/" + target.pidText() + "/stat").find(") T ") == std::string::npos &&
         std::chrono::steady_clock::now() < stopped)
    std::this_thread::sleep_for(10ms);
  auto r = attach(countingScript(100), {"-x", target.pidText()}, dir.path());
  EXPECT_EQ(r.exitCode, 1) << describe(r);
  EXPECT_NE(r.stderrText.find("sonde: -x " + target.pidText() + ": it is stopped"),
            std::string::npos)
      << describe(r);
  kill(target.pid(), SIGCONT);
  expectAllThreadsOk(target, 1);
}

TEST(AttachErrors, AlreadyAttached) {
  ScratchDir dir;
  RunningTarget target(1);
  ASSERT_TRUE(target.waitFor("ready"));
  BackgroundSonde first(kAnnounceScript, {"-x", target.pidText()});
  ASSERT_TRUE(first.printed("attached"));
  auto r = attach(countingScript(100), {"-x", target.pidText()}, dir.path());
  EXPECT_EQ(r.exitCode, 1) << describe(r);
  EXPECT_NE(r.stderrText.find("sonde: -x " + target.pidText() +
                              ": it already has a sonde agent attached"),
            std::string::npos)
      << describe(r);
  first.stop(SIGINT);
  expectAllThreadsOk(target, 1);
}

TEST(AttachErrors, NoMatchingMarker) {
  ScratchDir dir;
  RunningTarget target(1);
  ASSERT_TRUE(target.waitFor("ready"));
  auto r =
      attach(R"(probe process.mark("no_such_marker") {})", {"-x", target.pidText()}, dir.path());
  EXPECT_EQ(r.exitCode, 1) << describe(r);
  EXPECT_NE(r.stderrText.find("no match"), std::string::npos) << describe(r);
  EXPECT_NE(r.stderrText.find("Pass 2: analysis failed."), std::string::npos) << describe(r);
  expectAllThreadsOk(target, 1);
}

TEST(AttachErrors, StaticallyLinkedProcess) {
  ScratchDir dir;
  RunningTarget target(0, E2E_STATIC_WORKLOAD, {"sleep", "300", "100000"});
  std::this_thread::sleep_for(100ms); // exec'd
  std::string script = std::string(R"(probe process(")") + E2E_ATTACH + R"(").mark("tick") {})";
  auto r = attach(script, {"-x", target.pidText()}, dir.path());
  EXPECT_EQ(r.exitCode, 1) << describe(r);
  EXPECT_NE(r.stderrText.find("sonde: -x " + target.pidText() +
                              ": it has no C library mapped (statically linked?)"),
            std::string::npos)
      << describe(r);
}

TEST(AttachErrors, AnotherUsersProcessNeedsPrivileges) {
  if (getuid() != 0 || access("/usr/bin/setpriv", X_OK) != 0)
    GTEST_SKIP() << "needs root (to start sonde as nobody) and setpriv";
  ScratchDir dir;
  chmod(dir.path().c_str(), 0777);
  RunningTarget target(1);
  ASSERT_TRUE(target.waitFor("ready"));
  auto r = test::runProcess("/usr/bin/setpriv",
                            {"--reuid=65534", "--regid=65534", "--clear-groups", SONDE_BINARY, "-x",
                             target.pidText(), "-e", R"(probe process.mark("tick") {})"},
                            dir.path(), 60s);
  EXPECT_EQ(r.exitCode, 1) << describe(r);
  EXPECT_NE(r.stderrText.find("permission denied"), std::string::npos) << describe(r);
  expectAllThreadsOk(target, 1);
}

} // namespace
} // namespace sonde::e2e
