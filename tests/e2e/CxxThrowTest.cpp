// libstdc++'s stock `throw` marker (a 1-byte sys/sdt.h site in __cxa_throw) on a
// C++ target (e2e_throw.cpp): every throw counted, its arguments (the exception
// object, the std::type_info and through it the type's name) as the target saw
// them, and a backtrace from the handler naming the target's throwing function
// and its callers.
#include "SondeRun.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

namespace sonde::e2e {
namespace {

using test::linesOf;

const char *kLibstdcxx = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6";

std::string canonical(const std::string &path) { return std::filesystem::canonical(path).string(); }

// Runs `body` at every throw of `e2e_throw RECORDS requests`; the target's
// records (the exceptions it caught, then "thrown N" and "served S") go to
// `records`.
::testing::AssertionResult runThrows(const std::string &body, int requests, ScratchDir &dir,
                                     test::ProcessResult &result,
                                     std::vector<std::string> &records) {
  std::string script = markProbe(kLibstdcxx, "throw", body);
  std::string command =
      std::string(E2E_THROW) + " " + dir.file("records") + " " + std::to_string(requests);
  result = runSonde(script, command, dir.path());
  if (!result.exited || result.exitCode != 0)
    return ::testing::AssertionFailure() << describeRun(script, command, result);
  records = linesOf(readFile(dir.file("records")));
  if (records.size() < 2 || records[records.size() - 2].rfind("thrown ", 0) != 0)
    return ::testing::AssertionFailure() << "no \"thrown N\" line in the target's records";
  return ::testing::AssertionSuccess();
}

TEST(ThrowMarker, EveryThrowWithItsObjectAndType) {
  ScratchDir dir;
  test::ProcessResult result;
  std::vector<std::string> records;
  // The object's address, the mangled name type_info holds after its vtable
  // pointer, and the object's first word.
  ASSERT_TRUE(runThrows("printf(\"%p %s %d\\n\", $arg1, user_string(user_long($arg2 + 8)), "
                        "user_long($arg1))",
                        30, dir, result, records));
  std::string thrownLine = records[records.size() - 2];
  records.resize(records.size() - 2);
  EXPECT_EQ(thrownLine, "thrown " + std::to_string(records.size()));
  ASSERT_EQ(records.size(), 20u) << "two requests in three throw";
  // Requests 1 and 2 throw the two types (the target's records carry typeid's names).
  EXPECT_NE(records[0].find(" St13runtime_error "), std::string::npos) << records[0];
  EXPECT_NE(records[1].find(" N3e2e10BadRequestE "), std::string::npos) << records[1];
  EXPECT_EQ(linesOf(result.stdoutText), records);
}

// " 0xADDR : name+0xOFF/0xSIZE [module]" frames, one backtrace after each "throw".
TEST(ThrowMarker, BacktraceNamesTheThrowingChain) {
  ScratchDir dir;
  test::ProcessResult result;
  std::vector<std::string> records;
  ASSERT_TRUE(
      runThrows("println(\"throw \", ubacktrace()); print_ubacktrace()", 3, dir, result, records));
  ASSERT_EQ(records[records.size() - 2], "thrown 2");

  std::string exe = canonical(E2E_THROW), lib = canonical(kLibstdcxx);
  std::regex frameLine(R"( (0x[0-9a-f]+) : (\w+)\+0x[0-9a-f]+/0x[0-9a-f]+ \[(.+)\])");
  struct Backtrace {
    std::string listed;  // ubacktrace()
    std::string printed; // the addresses of print_ubacktrace()'s frames
    std::vector<std::string> frames;
  };
  std::vector<Backtrace> backtraces;
  for (const std::string &line : linesOf(result.stdoutText)) {
    std::smatch m;
    if (line.rfind("throw ", 0) == 0) {
      backtraces.push_back({line.substr(6), "", {}});
    } else if (std::regex_match(line, m, frameLine) && !backtraces.empty()) {
      std::string module = std::filesystem::exists(m[3].str()) ? canonical(m[3]) : m[3].str();
      backtraces.back().frames.push_back(m[2].str() + "|" + module);
      backtraces.back().printed += m[1].str() + " ";
    }
  }
  ASSERT_EQ(backtraces.size(), 2u) << result.stdoutText;
  for (const Backtrace &b : backtraces) {
    ASSERT_GE(b.frames.size(), 5u) << result.stdoutText;
    EXPECT_EQ(b.frames[0], "__cxa_throw|" + lib);
    EXPECT_EQ(b.frames[1], "validate_request|" + exe);
    EXPECT_EQ(b.frames[2], "handle_request|" + exe);
    EXPECT_EQ(b.frames[3], "serve_requests|" + exe);
    EXPECT_EQ(b.frames[4], "main|" + exe);
    EXPECT_EQ(b.listed, b.printed) << result.stdoutText;
  }
}

} // namespace
} // namespace sonde::e2e
