// Marker arguments end to end: a script's output for every marker the target
// fired must equal what the target recorded it passed (e2e_record.h), for the
// target built at -O0 and -O2 with clang (memory operands, some in the red
// zone) and at -O2 with gcc (register operands).
#include "MarkerRecords.h"
#include "SondeRun.h"

#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <utility>

namespace sonde::e2e {
namespace {

struct Target {
  const char *label;
  const char *executable;
  const char *library;
};

// gtest names parameters by label, not by their bytes.
void PrintTo(const Target &target, std::ostream *out) { *out << target.label; }

// The markers e2e_args.c fires in its executable, with their argument counts.
const std::vector<std::pair<std::string, int>> kExecutableMarkers = {
    {"widths", 12}, {"leaf", 4},  {"strings", 2}, {"constants", 4},
    {"noargs", 0},  {"twice", 2}, {"two", 2},     {"three", 3}};

// Five iterations: minima, maxima, then mixed values and every sample string.
constexpr const char *kIterations = "5";

// ", $arg1, $arg1, $arg2, $arg2" for count 2 and repeat 2.
std::string argumentList(int count, int repeat = 1) {
  std::string list;
  for (int i = 1; i <= count; ++i)
    for (int r = 0; r < repeat; ++r)
      list += ", $arg" + std::to_string(i);
  return list;
}

std::string repeated(const std::string &piece, int count) {
  std::string text;
  for (int i = 0; i < count; ++i)
    text += piece;
  return text;
}

class MarkerArguments : public ::testing::TestWithParam<Target> {
protected:
  // Runs `script` against the target and renders, from the records of that
  // very run, what it must print: `expect` maps each record to its line, or to
  // nothing for a record the script does not probe.
  void check(const std::string &script,
             const std::function<std::optional<std::string>(const MarkerRecord &)> &expect) {
    ScratchDir dir;
    std::string records = dir.file("records");
    std::string command = std::string(GetParam().executable) + " " + records + " " + kIterations;
    auto result = runSonde(script, command, dir.path());
    ASSERT_TRUE(result.exited && result.exitCode == 0) << describeRun(script, command, result);
    std::string error;
    auto fired = readRecords(records, error);
    ASSERT_TRUE(error.empty()) << error;
    ASSERT_FALSE(fired.empty()) << "the target recorded nothing";
    std::string expected;
    for (const auto &record : fired)
      if (auto line = expect(record))
        expected += *line + "\n";
    EXPECT_EQ(result.stdoutText, expected) << describeRun(script, command, result);
  }

  std::string executable() const { return GetParam().executable; }
};

TEST_P(MarkerArguments, SignedDecimalOfEveryWidth) {
  std::string script;
  for (const auto &[name, count] : kExecutableMarkers)
    script += markProbe(executable(), name,
                        "printf(\"%s %s " + std::to_string(count) + repeated(" %d", count) +
                            "\\n\", $$provider, $$name" + argumentList(count) + ")");
  check(script, [](const MarkerRecord &r) -> std::optional<std::string> {
    if (r.provider != "e2e")
      return std::nullopt;
    std::string line = r.provider + " " + r.name + " " + std::to_string(r.values.size());
    for (int64_t v : r.values)
      line += " " + std::to_string(v);
    return line;
  });
}

TEST_P(MarkerArguments, UnsignedAndHex) {
  std::string script;
  for (const auto &[name, count] : kExecutableMarkers)
    script += markProbe(executable(), name,
                        "printf(\"%s" + repeated(" %u/%x", count) + "\\n\", $$name" +
                            argumentList(count, 2) + ")");
  check(script, [](const MarkerRecord &r) -> std::optional<std::string> {
    if (r.provider != "e2e")
      return std::nullopt;
    std::string line = r.name;
    for (int64_t v : r.values)
      line += " " + std::to_string(static_cast<uint64_t>(v)) + "/" + stapHex(v).substr(2);
    return line;
  });
}

// stap formats $$parms of a mark as "$arg1=%#x $arg2=%#x ..." (language.md 4.3).
TEST_P(MarkerArguments, Parms) {
  std::string script;
  for (const auto &[name, count] : kExecutableMarkers)
    script += markProbe(executable(), name, "printf(\"%s [%s]\\n\", $$name, $$parms)");
  check(script, [](const MarkerRecord &r) -> std::optional<std::string> {
    if (r.provider != "e2e")
      return std::nullopt;
    std::string parms;
    for (size_t i = 0; i < r.values.size(); ++i)
      parms += (i ? " $arg" : "$arg") + std::to_string(i + 1) + "=" + stapHex(r.values[i]);
    return r.name + " [" + parms + "]";
  });
}

TEST_P(MarkerArguments, UserString) {
  std::string script =
      markProbe(executable(), "strings", "printf(\"[%s] %d\\n\", user_string($arg1), $arg2)");
  check(script, [](const MarkerRecord &r) -> std::optional<std::string> {
    if (r.name != "strings")
      return std::nullopt;
    return "[" + r.text + "] " + std::to_string(r.values[1]);
  });
}

TEST_P(MarkerArguments, DefinedArgument) {
  std::string body = "printf(\"%s %d\\n\", $$name, @defined($arg3) ? $arg3 : -1)";
  std::string script =
      markProbe(executable(), "two", body) + markProbe(executable(), "three", body);
  check(script, [](const MarkerRecord &r) -> std::optional<std::string> {
    if (r.name != "two" && r.name != "three")
      return std::nullopt;
    return r.name + " " + std::to_string(r.values.size() >= 3 ? r.values[2] : -1);
  });
}

// One glob matching several names, `twice` at both of its sites among them.
TEST_P(MarkerArguments, GlobbedName) {
  std::string script = markProbe(executable(), "t*", "printf(\"%s %d\\n\", $$name, $arg1)");
  check(script, [](const MarkerRecord &r) -> std::optional<std::string> {
    if (r.provider != "e2e" || r.name[0] != 't')
      return std::nullopt;
    return r.name + " " + std::to_string(r.values[0]);
  });
}

TEST_P(MarkerArguments, MarkerInSharedLibrary) {
  std::string script = markProbe(GetParam().library, "lib",
                                 "printf(\"%s %s %d %d [%s]\\n\", $$provider, $$name, $arg1, "
                                 "$arg2, user_string($arg3))");
  check(script, [](const MarkerRecord &r) -> std::optional<std::string> {
    if (r.provider != "e2e_lib")
      return std::nullopt;
    return r.provider + " " + r.name + " " + std::to_string(r.values[0]) + " " +
           std::to_string(r.values[1]) + " [" + r.text + "]";
  });
}

std::vector<Target> targets() {
  std::vector<Target> list = {{"clang_O0", E2E_ARGS_O0, E2E_LIB_O0},
                              {"clang_O2", E2E_ARGS_O2, E2E_LIB_O2}};
  if (std::string(E2E_ARGS_GCC_O2).size())
    list.push_back({"gcc_O2", E2E_ARGS_GCC_O2, E2E_LIB_O2});
  return list;
}

INSTANTIATE_TEST_SUITE_P(Builds, MarkerArguments, ::testing::ValuesIn(targets()),
                         [](const auto &info) { return std::string(info.param.label); });

// A stock <sys/sdt.h> marker is a 1-byte NOP: the trap path.
TEST(StockSdtMarker, ArgumentsThroughTheTrapPath) {
  ScratchDir dir;
  std::string records = dir.file("records");
  std::string script = markProbe(
      E2E_STOCK, "tick", "printf(\"%s %s %d %d %d\\n\", $$provider, $$name, $arg1, $arg2, $arg3)");
  std::string command = std::string(E2E_STOCK) + " " + records + " 50";
  auto result = runSonde(script, command, dir.path());
  ASSERT_TRUE(result.exited && result.exitCode == 0) << describeRun(script, command, result);
  std::string error;
  std::string expected;
  for (const auto &r : readRecords(records, error))
    expected += r.provider + " " + r.name + " " + std::to_string(r.values[0]) + " " +
                std::to_string(r.values[1]) + " " + std::to_string(r.values[2]) + "\n";
  ASSERT_TRUE(error.empty()) << error;
  EXPECT_EQ(result.stdoutText, expected) << describeRun(script, command, result);
}

} // namespace
} // namespace sonde::e2e
