// process("GLOB"), as stap expands it: every ELF file the glob matches is a
// process path of its own, so a marker of the one that runs fires, while the
// files without that marker (or without any) are passed over.
#include "SondeRun.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace sonde::e2e {
namespace {

namespace fs = std::filesystem;

// e2e_re* matches e2e_records (markers value and note), e2e_reenter (other
// markers) and e2e_report_flood (none).
std::string recordsGlob() { return fs::canonical(E2E_RECORDS).parent_path().string() + "/e2e_re*"; }

TEST(ProcessGlob, MarkerOfTheMatchingProgramFires) {
  ScratchDir dir;
  std::string script = "global n\n"
                       "probe process(\"" +
                       recordsGlob() +
                       "\").mark(\"value\") { n++ }\n"
                       "probe end { printf(\"%d values\\n\", n) }\n";
  std::string command = std::string(E2E_RECORDS) + " 300";
  test::ProcessResult r = runSonde(script, command, dir.path());
  EXPECT_EQ(r.exitCode, 0) << describeRun(script, command, r);
  EXPECT_EQ(r.stdoutText, "fired 300\n300 values\n") << describeRun(script, command, r);
}

TEST(ProcessGlob, ElaboratesToTheFilesWithTheMarker) {
  ScratchDir dir;
  std::string script = "probe process(\"" + recordsGlob() + "\").mark(\"[vs]*\") { next }";
  test::ProcessResult r = runSonde(script, E2E_RECORDS, dir.path(), {"-p2"});
  EXPECT_EQ(r.exitCode, 0) << describeRun(script, E2E_RECORDS, r);
  std::string folder = fs::canonical(E2E_RECORDS).parent_path().string();
  for (const char *point :
       {"/e2e_records\").mark(\"value\")", "/e2e_reenter\").mark(\"signalled\")",
        "/e2e_reenter\").mark(\"slow\")"})
    EXPECT_NE(r.stdoutText.find("process(\"" + folder + point + " /* <- "), std::string::npos)
        << point << "\n"
        << r.stdoutText;
  EXPECT_EQ(r.stdoutText.find("e2e_report_flood"), std::string::npos) << r.stdoutText;
}

// The lifecycle probes take a glob too: one probe per matching file.
TEST(ProcessGlob, BeginOfTheMatchingProgramFires) {
  ScratchDir dir;
  std::string script =
      "probe process(\"" + recordsGlob() + "\").begin { printf(\"begin %s\\n\", execname()) }";
  std::string command = std::string(E2E_RECORDS) + " 3";
  test::ProcessResult r = runSonde(script, command, dir.path());
  EXPECT_EQ(r.exitCode, 0) << describeRun(script, command, r);
  EXPECT_NE(r.stdoutText.find("begin e2e_records\n"), std::string::npos)
      << describeRun(script, command, r);
  EXPECT_NE(r.stdoutText.find("fired 3\n"), std::string::npos) << describeRun(script, command, r);

  test::ProcessResult elaborated = runSonde(script, command, dir.path(), {"-p2"});
  std::string folder = fs::canonical(E2E_RECORDS).parent_path().string();
  for (const char *file : {"e2e_records", "e2e_reenter", "e2e_report_flood"})
    EXPECT_NE(elaborated.stdoutText.find("process(\"" + folder + "/" + file + "\").begin /* <- "),
              std::string::npos)
        << file << "\n"
        << elaborated.stdoutText << elaborated.stderrText;
}

TEST(ProcessGlob, NoMatchNamesThePattern) {
  ScratchDir dir;
  std::string script = "probe process(\"/nonexistent-sonde*/app\").mark(\"value\") { next }";
  test::ProcessResult r = runSonde(script, E2E_RECORDS, dir.path(), {"-p2"});
  EXPECT_NE(r.exitCode, 0);
  EXPECT_NE(r.stderrText.find("no match (no file matches process(\"/nonexistent-sonde*/app\"))"),
            std::string::npos)
      << r.stderrText;
}

} // namespace
} // namespace sonde::e2e
