// TracepointCatalog over a tracefs-like fixture directory (names, globs, bare
// event names, formats) and over this machine's kernel.
#include "probes/tracepoint/TracepointCatalog.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace sonde::probes::tracepoint {
namespace {

namespace fs = std::filesystem;

class FixtureTracefs {
public:
  FixtureTracefs() {
    char pattern[] = "/tmp/sonde-tracefs-XXXXXX";
    root_ = ::mkdtemp(pattern);
    for (const char *name :
         {"sched:sched_switch", "sched:sched_process_exec", "syscalls:sys_enter_close",
          "syscalls:sys_exit_close", "other:sched_switch"})
      add(name);
    fs::create_directories(fs::path(root_) / "events" / "empty_system");
    std::ofstream(fs::path(root_) / "events" / "enable") << "0\n";
  }
  ~FixtureTracefs() { fs::remove_all(root_); }
  std::string events() const { return root_ + "/events"; }

private:
  void add(const std::string &name) {
    size_t colon = name.find(':');
    fs::path dir = fs::path(root_) / "events" / name.substr(0, colon) / name.substr(colon + 1);
    fs::create_directories(dir);
    std::ofstream(dir / "format") << "name: " << name.substr(colon + 1)
                                  << "\nID: 7\nformat:\n\tfield:int common_pid;\toffset:4;\t"
                                     "size:4;\tsigned:1;\n\tfield:int fd;\toffset:8;\tsize:4;\t"
                                     "signed:1;\n";
  }
  std::string root_;
};

TEST(TracepointCatalog, ListsEveryEventWithAFormat) {
  FixtureTracefs tracefs;
  TracepointCatalog catalog(tracefs.events());
  EXPECT_EQ(catalog.names(),
            (std::vector<std::string>{"other:sched_switch", "sched:sched_process_exec",
                                      "sched:sched_switch", "syscalls:sys_enter_close",
                                      "syscalls:sys_exit_close"}));
}

TEST(TracepointCatalog, FindsNamesGlobsAndUniqueBareEvents) {
  FixtureTracefs tracefs;
  TracepointCatalog catalog(tracefs.events());
  using V = std::vector<std::string>;
  EXPECT_EQ(catalog.find("sched:sched_switch").names, V{"sched:sched_switch"});
  EXPECT_EQ(catalog.find("syscalls:sys_*_close").names,
            (V{"syscalls:sys_enter_close", "syscalls:sys_exit_close"}));
  EXPECT_EQ(catalog.find("sys_enter_close").names, V{"syscalls:sys_enter_close"});
  EXPECT_EQ(catalog.find("*:sched_switch").names, (V{"other:sched_switch", "sched:sched_switch"}));
  EXPECT_EQ(catalog.find("sched_*").names.size(), 3u); // a glob may name several
  TracepointMatch none = catalog.find("sched:sched_swtich");
  EXPECT_TRUE(none.names.empty());
  EXPECT_EQ(none.error, "");
  TracepointMatch ambiguous = catalog.find("sched_switch");
  EXPECT_TRUE(ambiguous.names.empty());
  EXPECT_EQ(ambiguous.error,
            "tracepoint \"sched_switch\" is ambiguous: other:sched_switch, sched:sched_switch");
  EXPECT_EQ(catalog.find("a:b:c").error, "expected \"system:event\" or \"event\", got \"a:b:c\"");
  EXPECT_EQ(catalog.find(":x").error, "expected \"system:event\" or \"event\", got \":x\"");
}

TEST(TracepointCatalog, ReadsFormatsOnce) {
  FixtureTracefs tracefs;
  TracepointCatalog catalog(tracefs.events());
  std::string error;
  const TracepointFormat *f = catalog.format("syscalls:sys_enter_close", &error);
  ASSERT_NE(f, nullptr) << error;
  EXPECT_EQ(f->fields.back().name, "fd");
  EXPECT_EQ(catalog.format("syscalls:sys_enter_close", &error), f);
  EXPECT_EQ(catalog.format("nope:nothing", &error), nullptr);
  EXPECT_NE(error.find("nope/nothing/format"), std::string::npos) << error;
}

TEST(TracepointCatalog, TheRunningKernel) {
  std::string error;
  auto catalog = TracepointCatalog::open(&error);
  if (!catalog)
    GTEST_SKIP() << error;
  EXPECT_EQ(catalog->find("sched:sched_switch").names,
            std::vector<std::string>{"sched:sched_switch"});
  EXPECT_GT(catalog->find("syscalls:sys_enter_*").names.size(), 100u);
  const TracepointFormat *f = catalog->format("sched:sched_switch", &error);
  ASSERT_NE(f, nullptr) << error;
  EXPECT_EQ(f->name, "sched_switch");
}

} // namespace
} // namespace sonde::probes::tracepoint
