// Which tapset files the Frontend parses: those defining a name the scripts
// parsed so far use (aliases by their first name, functions, globals), to a
// fixed point; all of them for listings. A broken file nobody needs is never read.
#include "driver/Frontend.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

namespace sonde {
namespace {

namespace fs = std::filesystem;

class TapsetLoadingTest : public ::testing::Test {
protected:
  void SetUp() override {
    const auto *info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("sonde-tapsets-" + std::to_string(getpid()) + "-" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    write("alias.probe", "probe myalias.tick = timer.ms(1) { n = 1 }\n");
    write("calls.probe", "function outer_fn() { return inner_fn() + 1 }\n");
    write("inner.probe", "function inner_fn() { return 41 }\n");
    write("state.probe", "global lib_counter\nprivate global hidden, other_hidden\n");
    write("broken.probe", "function broken_fn() { return ( }\n");
  }
  void TearDown() override { fs::remove_all(dir_); }

  void write(const std::string &name, const std::string &text) const {
    std::ofstream(dir_ / name) << text;
  }

  // Parses `script` and the tapsets it needs; the diagnostics, "" when clean.
  std::string load(const std::string &script,
                   Frontend::LibraryParse which = Frontend::LibraryParse::Needed) {
    std::ostringstream diags;
    FrontendOptions o;
    o.loadStdlib = false;
    o.includeDirs = {dir_.string()};
    Frontend fe(diags, o);
    EXPECT_TRUE(fe.parseUserScript("s.probe", script)) << diags.str();
    bool ok = fe.parseLibraries(which);
    if (ok && which == Frontend::LibraryParse::Needed)
      EXPECT_TRUE(fe.elaborate()) << diags.str();
    functions_ = fe.script().functions.size();
    return ok ? "" : diags.str();
  }

  fs::path dir_;
  size_t functions_ = 0;
};

TEST_F(TapsetLoadingTest, OnlyTheFilesAScriptNeeds) {
  EXPECT_EQ(load("probe begin { exit() }"), "");
  EXPECT_EQ(functions_, 0u);
  EXPECT_EQ(load("probe myalias.tick { exit() }"), "");
}

TEST_F(TapsetLoadingTest, FunctionsPullInWhatTheyCall) {
  EXPECT_EQ(load("probe begin { println(outer_fn()); exit() }"), "");
  EXPECT_EQ(functions_, 2u);
}

TEST_F(TapsetLoadingTest, GlobalsNameTheirFile) {
  EXPECT_EQ(load("probe begin { lib_counter++; exit() }"), "");
}

TEST_F(TapsetLoadingTest, ABrokenFileIsReportedOnceSomethingUsesIt) {
  EXPECT_NE(load("probe begin { println(broken_fn()) }").find("broken.probe"), std::string::npos);
  EXPECT_NE(load("probe begin { }", Frontend::LibraryParse::All).find("broken.probe"),
            std::string::npos);
}

} // namespace
} // namespace sonde
