// `sonde -l` / `-L` end to end: the real binary listing the marker test targets built
// here (sonde/sdt.h, 5-byte NOP sites), a program compiled at run time with
// <sys/sdt.h> (1-byte NOP sites, two providers sharing a name, a site at an unknown
// instruction), /usr/bin/python3.11 when installed, and the other probe families.
#include "../corpus/ProcessRunner.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <unistd.h>

namespace sonde::test {
namespace {

namespace fs = std::filesystem;

constexpr std::chrono::seconds kTimeout{60};

ProcessResult sonde(const std::vector<std::string> &args, const std::string &dir = "/") {
  return runProcess(SONDE_BINARY, args, dir, kTimeout);
}

std::string canonical(const char *path) { return fs::canonical(path).string(); }

TEST(ProbeListing, DistinctMarkersOfAProgramSorted) {
  std::string exe = canonical(MARKER_C_O2_PIE);
  ProcessResult r = sonde({"-l", "process(\"" + exe + "\").mark(\"*\")"});
  EXPECT_EQ(r.exitCode, 0) << r.stderrText;
  EXPECT_EQ(r.stderrText, "");
  std::string p = "process(\"" + exe + "\")";
  // `one` has two sites but is one probe point.
  EXPECT_EQ(r.stdoutText, p + ".mark(\"guarded\")\n" + p + ".mark(\"one\")\n" + p +
                              ".mark(\"twelve\")\n" + p + ".mark(\"two\")\n" + p +
                              ".mark(\"zero\")\n");
}

TEST(ProbeListing, VariablesNoteAndAttachPathPerSite) {
  std::string exe = canonical(MARKER_CPP_O0_NOPIE);
  ProcessResult r = sonde({"-L", "process(\"" + exe + "\").mark(\"[ot][nw]*\")"});
  EXPECT_EQ(r.exitCode, 0) << r.stderrText;
  std::vector<std::string> lines = linesOf(r.stdoutText);
  ASSERT_EQ(lines.size(), 4u) << r.stdoutText; // one (2 sites), twelve, two
  std::string p = "process\\(\"" + std::regex_replace(exe, std::regex("[.+]"), "\\$&") +
                  "\"\\)\\.provider\\(\"sonde_test\"\\)";
  std::string site = " /\\* patched at 0x[0-9a-f]+, semaphore 0x[0-9a-f]+: ";
  // The two sites of `one` (an int and a long), in address order.
  std::regex one(p + "\\.mark\\(\"one\"\\) \\$arg1:long" + site + "(-4|-8)@\\S+ \\*/");
  std::smatch first, second;
  ASSERT_TRUE(std::regex_match(lines[0], first, one)) << lines[0];
  ASSERT_TRUE(std::regex_match(lines[1], second, one)) << lines[1];
  EXPECT_NE(first[1].str(), second[1].str());
  EXPECT_TRUE(
      std::regex_match(lines[2], std::regex(p + "\\.mark\\(\"twelve\"\\)( \\$arg\\d+:long){12}" +
                                            site + "(\\S+ ){10}-8@\\$-9 1@\\S+ \\*/")))
      << lines[2];
  EXPECT_TRUE(std::regex_match(lines[3], std::regex(p +
                                                    "\\.mark\\(\"two\"\\) \\$arg1:long "
                                                    "\\$arg2:long" +
                                                    site + "8@\\S+ -4@\\$42 \\*/")))
      << lines[3];
}

TEST(ProbeListing, MarkerWithoutArguments) {
  std::string exe = canonical(MARKER_C_O0_PIE);
  ProcessResult r = sonde({"-L", "process(\"" + exe + "\").mark(\"zero\")"});
  EXPECT_EQ(r.exitCode, 0) << r.stderrText;
  EXPECT_TRUE(std::regex_match(r.stdoutText,
                               std::regex("process\\(\".*\"\\)\\.provider\\(\"sonde_test\"\\)"
                                          "\\.mark\\(\"zero\"\\) /\\* patched at 0x[0-9a-f]+, "
                                          "semaphore 0x[0-9a-f]+ \\*/\n")))
      << r.stdoutText;
}

TEST(ProbeListing, LibrarySitesOfTheProgram) {
  std::string exe = canonical(MARKER_LIB_USER_O2);
  std::string lib = canonical(MARKER_LIB_O2);
  std::string head = "process(\"" + exe + "\").library(\"" + lib + "\")";
  ProcessResult all = sonde({"-l", "process(\"" + exe + "\").mark(\"*\")"});
  EXPECT_EQ(all.exitCode, 0) << all.stderrText;
  EXPECT_EQ(all.stdoutText, head + ".mark(\"guarded\")\n" + head + ".mark(\"measured\")\n");

  ProcessResult byName =
      sonde({"-l", "process(\"" + exe + "\").library(\"libmarker_lib*\").mark(\"meas*\")"});
  EXPECT_EQ(byName.stdoutText, head + ".mark(\"measured\")\n") << byName.stderrText;

  ProcessResult provider =
      sonde({"-l", "process(\"" + exe + "\").provider(\"sonde_l?b\").mark(\"measured\")"});
  EXPECT_EQ(provider.stdoutText, head + ".provider(\"sonde_lib\").mark(\"measured\")\n")
      << provider.stderrText;

  ProcessResult lines = sonde({"-L", "process(\"" + exe + "\").mark(\"measured\")"});
  EXPECT_EQ(linesOf(lines.stdoutText).size(), 2u) << lines.stdoutText; // one site per file
}

TEST(ProbeListing, RelativePathAndOptionalSuffix) {
  fs::path exe = canonical(MARKER_C_O0_PIE);
  ProcessResult r = sonde({"-l", "process(\"./" + exe.filename().string() + "\").mark(\"zero\")?"},
                          exe.parent_path().string());
  EXPECT_EQ(r.exitCode, 0) << r.stderrText;
  EXPECT_EQ(r.stdoutText, "process(\"" + exe.string() + "\").mark(\"zero\")?\n");
}

TEST(ProbeListing, BareProcessNamesTheCommand) {
  std::string exe = canonical(MARKER_C_O2_NOPIE);
  ProcessResult r = sonde({"-c", exe + " 3", "-l", "process.mark(\"zero\")"});
  EXPECT_EQ(r.exitCode, 0) << r.stderrText;
  EXPECT_EQ(r.stdoutText, "process(\"" + exe + "\").mark(\"zero\")\n");

  ProcessResult none = sonde({"-l", "process.mark(\"zero\")"});
  EXPECT_EQ(none.exitCode, 1);
  EXPECT_EQ(none.stderrText,
            "sonde: -l: process.mark needs a target: use process(\"PATH\"), -c CMD or -x PID\n");
}

TEST(ProbeListing, NoMatchPrintsNothingAndFails) {
  // As stap: nothing on either stream, exit 1.
  ProcessResult r =
      sonde({"-l", "process(\"" + canonical(MARKER_C_O2_PIE) + "\").mark(\"no_such_mark\")"});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(r.stdoutText, "");
  EXPECT_EQ(r.stderrText, "");
  ProcessResult unknown = sonde({"-l", "no.such.family"});
  EXPECT_EQ(unknown.exitCode, 1);
  EXPECT_EQ(unknown.stdoutText, "");
}

TEST(ProbeListing, ErrorsNameTheOption) {
  ProcessResult missing = sonde({"-L", "process(\"/no/such/program\").mark(\"*\")"});
  EXPECT_EQ(missing.exitCode, 1);
  EXPECT_EQ(missing.stdoutText, "");
  EXPECT_EQ(missing.stderrText, "sonde: -L: no such file: /no/such/program\n");

  ProcessResult syntax = sonde({"-l", "begin("});
  EXPECT_EQ(syntax.exitCode, 1);
  EXPECT_NE(syntax.stderrText.find("sonde: -l: not a probe point: begin(\n"), std::string::npos)
      << syntax.stderrText;
  ProcessResult injected = sonde({"-l", "begin {} probe end"});
  EXPECT_EQ(injected.exitCode, 1);
  EXPECT_EQ(injected.stderrText, "sonde: -l: not a probe point: begin {} probe end\n");

  ProcessResult ambiguous = sonde({"-l", "kernel.trace(\"a:b:c\")"});
  EXPECT_EQ(ambiguous.exitCode, 1);
  EXPECT_EQ(ambiguous.stderrText,
            "sonde: -l: expected \"system:event\" or \"event\", got \"a:b:c\"\n");

  ProcessResult range = sonde({"-l", "timer.ms(0)"});
  EXPECT_EQ(range.exitCode, 1);
  EXPECT_EQ(range.stderrText,
            "sonde: -l: timer.ms(0): interval value out of range (1, 86400000)\n");

  ProcessResult unsupported = sonde({"-l", "kernel.function(\"vfs_read\")"});
  EXPECT_EQ(unsupported.exitCode, 1);
  EXPECT_EQ(unsupported.stderrText,
            "sonde: -l: probe point not supported: kernel.function(\"vfs_read\")\n");

  ProcessResult pid = sonde({"-l", "process(999999999).mark(\"*\")"});
  EXPECT_EQ(pid.exitCode, 1);
  EXPECT_EQ(pid.stderrText, "sonde: -l: no such process 999999999\n");
}

// The running kernel's tracepoints (the syscall ones have had these fields
// since tracefs has had them).
TEST(ProbeListing, KernelTracepointsAndTheirFields) {
  ProcessResult listed = sonde({"-l", "kernel.trace(\"syscalls:sys_e*_close\")"});
  if (listed.stderrText.find("permission denied") != std::string::npos)
    GTEST_SKIP() << listed.stderrText;
  EXPECT_EQ(listed.exitCode, 0) << listed.stderrText;
  EXPECT_EQ(listed.stdoutText, "kernel.trace(\"syscalls:sys_enter_close\")\n"
                               "kernel.trace(\"syscalls:sys_exit_close\")\n");

  ProcessResult fields = sonde({"-L", "kernel.trace(\"sys_enter_close\")?"});
  EXPECT_EQ(fields.exitCode, 0) << fields.stderrText;
  EXPECT_EQ(fields.stdoutText,
            "kernel.trace(\"syscalls:sys_enter_close\")? $__syscall_nr:int $fd:unsigned int\n");

  ProcessResult none = sonde({"-l", "kernel.trace(\"no_such_system:*\")"});
  EXPECT_EQ(none.exitCode, 1);
  EXPECT_EQ(none.stdoutText, "");
}

TEST(ProbeListing, OtherFamiliesListThemselves) {
  ProcessResult r = sonde({"-l", "begin, end(1), error, never, timer.ms(100), timer.hz(10), "
                                 "process.begin, process(\"/bin/sh\").thread.end"});
  EXPECT_EQ(r.exitCode, 0) << r.stderrText;
  EXPECT_EQ(r.stdoutText, "begin\nend(1)\nerror\nnever\nprocess(\"/bin/sh\").thread.end\n"
                          "process.begin\ntimer.hz(10)\ntimer.ms(100)\n");
  ProcessResult withVariables = sonde({"-L", "timer.s(1)"});
  EXPECT_EQ(withVariables.stdoutText, "timer.s(1)\n");
}

TEST(ProbeListing, WildcardFamilyNamesAndAliases) {
  ProcessResult r = sonde({"-l", "process.*"});
  EXPECT_EQ(r.exitCode, 0) << r.stderrText;
  EXPECT_EQ(r.stdoutText, "process.begin\nprocess.end\n");
  ProcessResult alias = sonde({"-l", "timer.profile"}); // the stdlib alias
  EXPECT_EQ(alias.stdoutText, "timer.profile\n") << alias.stderrText;
  ProcessResult threads = sonde({"-l", "process.thread.*"});
  EXPECT_EQ(threads.stdoutText, "process.thread.begin\nprocess.thread.end\n") << threads.stderrText;
}

// sys/sdt.h sites: trap; two providers with one name: the provider form for both; a
// hand-written note at an instruction that is no NOP: unpatchable.
constexpr const char *kSysSdtSource = R"(
#include <sys/sdt.h>
int main(int argc, char **argv) {
  DTRACE_PROBE1(alpha, shared, argc);
  DTRACE_PROBE1(beta, shared, argc);
  DTRACE_PROBE(alpha, single);
  __asm__ __volatile__(
      "990: xchg %%ax, %%ax\n"
      ".pushsection .note.stapsdt, \"?\", \"note\"\n"
      ".balign 4\n"
      ".4byte 992f-991f, 994f-993f, 3\n"
      "991: .asciz \"stapsdt\"\n"
      "992: .balign 4\n"
      "993: .8byte 990b, _.stapsdt.base, 0\n"
      ".asciz \"alpha\"\n"
      ".asciz \"odd\"\n"
      ".asciz \"4@%%nosuchreg\"\n"
      "994: .balign 4\n"
      ".popsection\n" ::);
  (void)argv;
  return 0;
}
)";

TEST(ProbeListing, SysSdtProvidersTrapsAndUnpatchableSites) {
  fs::path dir = fs::path(testing::TempDir()) / ("sonde_listing_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "t.c") << kSysSdtSource;
  ProcessResult cc = runProcess("/bin/sh", {"-c", "cc -O0 -o t t.c"}, dir.string(), kTimeout);
  ASSERT_EQ(cc.exitCode, 0) << cc.stdoutText << cc.stderrText;
  std::string p = "process(\"" + fs::canonical(dir / "t").string() + "\")";

  ProcessResult l = sonde({"-l", p + ".mark(\"*\")"});
  EXPECT_EQ(l.stdoutText, p + ".mark(\"odd\")\n" + p + ".mark(\"single\")\n" + p +
                              ".provider(\"alpha\").mark(\"shared\")\n" + p +
                              ".provider(\"beta\").mark(\"shared\")\n")
      << l.stderrText;

  ProcessResult bigL = sonde({"-L", p + ".mark(\"*\")"});
  std::vector<std::string> lines = linesOf(bigL.stdoutText);
  ASSERT_EQ(lines.size(), 4u) << bigL.stdoutText << bigL.stderrText;
  EXPECT_TRUE(
      std::regex_match(lines[0], std::regex(".*\\.mark\\(\"odd\"\\) /\\* unpatchable at "
                                            "0x[0-9a-f]+: bad arguments: .*nosuchreg.* \\*/")))
      << lines[0];
  EXPECT_TRUE(std::regex_match(
      lines[1], std::regex(".*\\.provider\\(\"alpha\"\\)\\.mark\\(\"shared\"\\) \\$arg1:long "
                           "/\\* (trap|jump \\([0-9]+ bytes displaced\\)) at "
                           "0x[0-9a-f]+: -4@\\S+( |; trap: .*)\\*/")))
      << lines[1];
  fs::remove_all(dir);
}

TEST(ProbeListing, PythonMarkers) {
  const char *python = "/usr/bin/python3.11";
  if (!fs::exists(python))
    GTEST_SKIP() << python << " is not installed";
  ProcessResult l = sonde({"-l", "process(\"/usr/bin/python3.11\").mark(\"gc*\")"});
  EXPECT_EQ(l.exitCode, 0) << l.stderrText;
  EXPECT_EQ(l.stdoutText, "process(\"/usr/bin/python3.11\").mark(\"gc__done\")\n"
                          "process(\"/usr/bin/python3.11\").mark(\"gc__start\")\n");
  ProcessResult bigL = sonde({"-L", "process(\"/usr/bin/python3.11\").mark(\"gc__done\")"});
  EXPECT_TRUE(std::regex_match(bigL.stdoutText,
                               std::regex("process\\(\"/usr/bin/python3\\.11\"\\)\\.provider\\("
                                          "\"python\"\\)\\.mark\\(\"gc__done\"\\) \\$arg1:long "
                                          "/\\* jump \\(6 bytes displaced\\) at 0x[0-9a-f]+, "
                                          "semaphore 0x[0-9a-f]+: \\S+ \\*/\n")))
      << bigL.stdoutText;
}

// Scripts may spell a marker's "__" as "-" (dtrace's form); listing takes the
// same spelling and prints the marker's own name.
TEST(ProbeListing, DashSpellingOfMarkerNames) {
  const char *python = "/usr/bin/python3.11";
  if (!fs::exists(python))
    GTEST_SKIP() << python << " is not installed";
  ProcessResult l = sonde({"-l", "process(\"/usr/bin/python3.11\").mark(\"gc-start\")"});
  EXPECT_EQ(l.exitCode, 0) << l.stderrText;
  EXPECT_EQ(l.stdoutText, "process(\"/usr/bin/python3.11\").mark(\"gc__start\")\n");
  ProcessResult bigL = sonde({"-L", "process(\"/usr/bin/python3.11\").mark(\"gc-st*\")"});
  EXPECT_TRUE(std::regex_match(bigL.stdoutText,
                               std::regex("process\\(\"/usr/bin/python3\\.11\"\\)\\.provider\\("
                                          "\"python\"\\)\\.mark\\(\"gc__start\"\\) \\$arg1:long "
                                          "/\\* jump .* \\*/\n")))
      << bigL.stdoutText << bigL.stderrText;
}

// process("GLOB") names every ELF file the glob matches, each listed as the
// process it is; files without the marker list nothing.
TEST(ProbeListing, ProcessGlobListsEachMatchingFile) {
  std::string pie = canonical(MARKER_C_O2_PIE), nopie = canonical(MARKER_C_O2_NOPIE);
  std::string dir = fs::path(pie).parent_path().string();
  ASSERT_EQ(fs::path(nopie).parent_path().string(), dir);
  ProcessResult r = sonde({"-l", "process(\"" + dir + "/marker_c_O2_*pie\").mark(\"zero\")"});
  EXPECT_EQ(r.exitCode, 0) << r.stderrText;
  EXPECT_EQ(r.stdoutText,
            "process(\"" + nopie + "\").mark(\"zero\")\nprocess(\"" + pie + "\").mark(\"zero\")\n");

  ProcessResult begin = sonde({"-l", "process(\"" + dir + "/marker_c_O2_*pie\").begin"});
  EXPECT_EQ(begin.exitCode, 0) << begin.stderrText;
  EXPECT_EQ(begin.stdoutText, "process(\"" + nopie + "\").begin\nprocess(\"" + pie + "\").begin\n");

  if (fs::exists("/usr/bin/python3.11")) {
    // python3 is a link to python3.11 (listed once); python3-config, a shell
    // script, is passed over.
    ProcessResult py = sonde({"-l", "process(\"/usr/bin/python3*\").mark(\"gc-start\")"});
    EXPECT_EQ(py.exitCode, 0) << py.stderrText;
    EXPECT_EQ(py.stdoutText, "process(\"/usr/bin/python3.11\").mark(\"gc__start\")\n");
  }

  ProcessResult none = sonde({"-l", "process(\"/nonexistent-sonde*/app\").mark(\"*\")"});
  EXPECT_EQ(none.exitCode, 1);
  EXPECT_EQ(none.stdoutText, "");
  EXPECT_EQ(none.stderrText, "sonde: -l: no file matches process(\"/nonexistent-sonde*/app\")\n");
}

// -L on a tapset alias: its locals with their types, in the order the alias
// sets them (stap's form), then the variables of the tracepoint it expands to.
TEST(ProbeListing, AliasLocalsAndTheirTypes) {
  ProcessResult openat = sonde({"-L", "syscall.openat"});
  if (openat.stderrText.find("permission denied") != std::string::npos)
    GTEST_SKIP() << openat.stderrText;
  EXPECT_EQ(openat.exitCode, 0) << openat.stderrText;
  EXPECT_EQ(openat.stdoutText.rfind("syscall.openat name:string dfd:long filename:string "
                                    "filename_uaddr:long flags:long mode:long argstr:string $",
                                    0),
            0u)
      << openat.stdoutText;
  EXPECT_NE(openat.stdoutText.find(" $filename:"), std::string::npos) << openat.stdoutText;
  EXPECT_EQ(linesOf(openat.stdoutText).size(), 1u) << openat.stdoutText;

  ProcessResult any = sonde({"-L", "syscall_any, syscall_any.return"});
  std::vector<std::string> lines = linesOf(any.stdoutText);
  ASSERT_EQ(lines.size(), 2u) << any.stdoutText << any.stderrText;
  EXPECT_EQ(lines[0].rfind("syscall_any syscall_nr:long name:string $id:long", 0), 0u) << lines[0];
  EXPECT_EQ(
      lines[1].rfind("syscall_any.return syscall_nr:long name:string retval:long $id:long", 0), 0u)
      << lines[1];

  ProcessResult names = sonde({"-l", "syscall_any, syscall_any.return"});
  EXPECT_EQ(names.stdoutText, "syscall_any\nsyscall_any.return\n") << names.stderrText;
}

} // namespace
} // namespace sonde::test
