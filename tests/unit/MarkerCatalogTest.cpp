// MarkerCatalog on programs and libraries compiled here with <sys/sdt.h>: which
// objects a query searches (DT_NEEDED through RUNPATH, inherited RPATH and
// LD_LIBRARY_PATH with $ORIGIN; system libraries only through .library), the globs,
// argument symbols resolved through .symtab and .dynsym, the errors, and the cache.
#include "probes/marker/MarkerCatalog.h"
#include "probes/marker/LibraryResolver.h"

#include "../corpus/ProcessRunner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace sonde::probes::marker;
namespace fs = std::filesystem;

namespace {

constexpr const char *kInnerSource = R"(
#include <sys/sdt.h>
int inner_work(int n) { DTRACE_PROBE1(demo, inner_mark, n); return n * 2; }
)";

constexpr const char *kDepSource = R"(
#include <sys/sdt.h>
int inner_work(int n);
static long dep_counter = 7;
int dep_work(int n) {
  DTRACE_PROBE1(demo, dep_mark, dep_counter);
  dep_counter = n;
  return inner_work(n);
}
)";

// `counter` is exported (-rdynamic) so a stripped copy still has it in .dynsym;
// `hidden_counter` is file-local and only in .symtab. `app_imm` is a hand-written
// note with an immediate symbol operand, which compilers rarely emit on their own.
constexpr const char *kAppSource = R"(
#include <sys/sdt.h>
int dep_work(int n);
long counter = 3;
static long hidden_counter = 4;
long table[4];
int main(int argc, char **argv) {
  DTRACE_PROBE(other, app_start);
  DTRACE_PROBE2(demo, app_global, counter, hidden_counter);
  hidden_counter = argc;
  __asm__ __volatile__(
      "990: nop\n"
      ".pushsection .note.stapsdt, \"?\", \"note\"\n"
      ".balign 4\n"
      ".4byte 992f-991f, 994f-993f, 3\n"
      "991: .asciz \"stapsdt\"\n"
      "992: .balign 4\n"
      "993: .8byte 990b, _.stapsdt.base, 0\n"
      ".asciz \"demo\"\n"
      ".asciz \"app_imm\"\n"
      ".asciz \"8@$table+16 8@$no_such_symbol\"\n"
      "994: .balign 4\n"
      ".popsection\n");
  (void)argv;
  return dep_work(argc) == 0;
}
)";

class MarkerCatalogTest : public testing::Test {
protected:
  // Built once per test process: dir/app needs lib/libdep.so (RUNPATH $ORIGIN/lib),
  // which needs lib/inner/libinner.so (RUNPATH $ORIGIN/inner), plus libstdc++.
  static void SetUpTestSuite() {
    dir_ = fs::path(testing::TempDir()) / ("sonde_catalog_" + std::to_string(getpid()));
    fs::create_directories(dir_ / "lib/inner");
    fs::create_directories(dir_ / "lib2");
    std::ofstream(dir_ / "inner.c") << kInnerSource;
    std::ofstream(dir_ / "dep.c") << kDepSource;
    std::ofstream(dir_ / "app.c") << kAppSource;
    std::string cc = "cc -O2 -Wall ";
    build_ = run(
        cc + "-fPIC -shared -o lib/inner/libinner.so inner.c && " + //
        cc + "-fPIC -shared -o lib/libdep.so dep.c -Llib/inner -linner -Wl,--enable-new-dtags " +
        "-Wl,-rpath,'$ORIGIN/inner' && " +
        // The same library without a search path: found only through its loader's RPATH.
        cc + "-fPIC -shared -o lib2/libdep.so dep.c -Llib/inner -linner && " + //
        cc + "-rdynamic -o app app.c -Llib -ldep -Wl,--enable-new-dtags -Wl,-rpath,'$ORIGIN/lib' " +
        "-Wl,--no-as-needed -lstdc++ && " + //
        cc + "-o app_rpath app.c -Llib2 -ldep -Wl,-rpath-link,lib/inner -Wl,--disable-new-dtags " +
        "-Wl,-rpath,'$ORIGIN/lib2:$ORIGIN/lib/inner' && " +                  //
        cc + "-o app_bare app.c -Llib -ldep -Wl,-rpath-link,lib/inner && " + //
        "strip -o app_stripped app && " +                                    //
        "printf 'not an ELF file\\n' > notes.txt");
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  void SetUp() override { ASSERT_EQ(build_, "") << "building the test programs failed"; }

  // Runs a shell command in the scratch directory; "" on success, else its output.
  static std::string run(const std::string &command) {
    auto result = sonde::test::runProcess("/bin/sh", {"-c", command + " 2>&1"}, dir_.string(),
                                          std::chrono::seconds(120));
    if (result.exited && result.exitCode == 0)
      return "";
    return result.describe() + ": " + result.stdoutText + result.stderrText + result.error;
  }

  static std::string path(const std::string &relative) {
    return fs::canonical(dir_ / relative).string();
  }

  // "binary-basename:provider:name" of each site, in result order.
  static std::vector<std::string> describe(const MarkerQueryResult &r) {
    std::vector<std::string> out;
    for (const CatalogSite &s : r.sites)
      out.push_back(fs::path(s.binary).filename().string() + ":" + s.site.provider + ":" +
                    s.site.name);
    return out;
  }

  static MarkerQueryResult find(const std::string &process, const std::string &name,
                                const std::string &library = "",
                                const std::string &provider = "*") {
    MarkerQuery q;
    q.process = process;
    q.library = library;
    q.provider = provider;
    q.name = name;
    return MarkerCatalog().find(q);
  }

  // The address `nm` gives a symbol of `binary` (independent of libelf).
  static uint64_t nmAddress(const std::string &binary, const std::string &symbol) {
    auto result =
        sonde::test::runProcess("/bin/sh", {"-c", "nm -D " + binary + " 2>/dev/null; nm " + binary},
                                dir_.string(), std::chrono::seconds(30));
    std::istringstream in(result.stdoutText);
    for (std::string line; std::getline(in, line);) {
      std::istringstream fields(line); // "ADDRESS TYPE NAME"; undefined ones lack ADDRESS
      std::string address, type, name;
      if (fields >> address >> type >> name && name == symbol)
        return std::stoull(address, nullptr, 16);
    }
    ADD_FAILURE() << symbol << " not in nm output of " << binary;
    return 0;
  }

  static inline fs::path dir_;
  static inline std::string build_;
};

TEST_F(MarkerCatalogTest, ProgramAndItsOwnLibrariesNotSystemOnes) {
  MarkerQueryResult r = find(path("app"), "*");
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(describe(r), (std::vector<std::string>{"app:other:app_start", "app:demo:app_global",
                                                   "app:demo:app_imm", "libdep.so:demo:dep_mark",
                                                   "libinner.so:demo:inner_mark"}));
  EXPECT_EQ(r.sites[0].binary, path("app"));
  EXPECT_EQ(r.sites[3].binary, path("lib/libdep.so"));
  EXPECT_EQ(r.sites[4].binary, path("lib/inner/libinner.so"));
  // libstdc++ has markers (throw, catch, ...) but is a system library.
  EXPECT_EQ(r.allNames, (std::vector<std::string>{"app_global", "app_imm", "app_start", "dep_mark",
                                                  "inner_mark"}));
}

TEST_F(MarkerCatalogTest, RelativeProcessPathIsCanonical) {
  std::string cwd = fs::current_path().string();
  fs::current_path(dir_);
  MarkerQueryResult r = find("./lib/../app", "app_start");
  fs::current_path(cwd);
  ASSERT_EQ(r.error, "");
  ASSERT_EQ(r.sites.size(), 1u);
  EXPECT_EQ(r.sites[0].binary, path("app"));
}

TEST_F(MarkerCatalogTest, LibraryFoundThroughInheritedRpath) {
  // app_rpath has DT_RPATH $ORIGIN/lib2:$ORIGIN/lib/inner; lib2/libdep.so has no
  // search path of its own, so libinner.so is found through the program's RPATH.
  MarkerQueryResult r = find(path("app_rpath"), "*_mark");
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(describe(r),
            (std::vector<std::string>{"libdep.so:demo:dep_mark", "libinner.so:demo:inner_mark"}));
  EXPECT_EQ(r.sites[0].binary, path("lib2/libdep.so"));
}

TEST_F(MarkerCatalogTest, LibraryFoundThroughLdLibraryPathOrSkipped) {
  const char *saved = std::getenv("LD_LIBRARY_PATH");
  std::string savedValue = saved ? saved : "";
  unsetenv("LD_LIBRARY_PATH");
  MarkerQueryResult without = find(path("app_bare"), "*_mark");
  setenv("LD_LIBRARY_PATH", (path("lib") + ":" + path("lib/inner")).c_str(), 1);
  MarkerQueryResult with = find(path("app_bare"), "*_mark");
  if (saved)
    setenv("LD_LIBRARY_PATH", savedValue.c_str(), 1);
  else
    unsetenv("LD_LIBRARY_PATH");
  EXPECT_EQ(without.error, ""); // a library found nowhere is skipped silently
  EXPECT_TRUE(without.sites.empty());
  EXPECT_EQ(with.error, "");
  EXPECT_EQ(describe(with),
            (std::vector<std::string>{"libdep.so:demo:dep_mark", "libinner.so:demo:inner_mark"}));
}

TEST_F(MarkerCatalogTest, SharedLibraryAsProcess) {
  MarkerQueryResult r = find(path("lib/libdep.so"), "*");
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(describe(r),
            (std::vector<std::string>{"libdep.so:demo:dep_mark", "libinner.so:demo:inner_mark"}));
}

TEST_F(MarkerCatalogTest, ProviderAndNameGlobs) {
  EXPECT_EQ(describe(find(path("app"), "app_*", "", "demo")),
            (std::vector<std::string>{"app:demo:app_global", "app:demo:app_imm"}));
  EXPECT_EQ(describe(find(path("app"), "*", "", "oth?r")),
            (std::vector<std::string>{"app:other:app_start"}));
  EXPECT_EQ(describe(find(path("app"), "[di]*_mark")),
            (std::vector<std::string>{"libdep.so:demo:dep_mark", "libinner.so:demo:inner_mark"}));
  MarkerQueryResult none = find(path("app"), "app_glob");
  EXPECT_EQ(none.error, "");
  EXPECT_TRUE(none.sites.empty());
  EXPECT_EQ(none.allNames.size(), 5u); // for the "similar" hint
}

TEST_F(MarkerCatalogTest, LibraryByNameGlobOrPath) {
  EXPECT_EQ(describe(find(path("app"), "*", "libinner.so")),
            (std::vector<std::string>{"libinner.so:demo:inner_mark"}));
  EXPECT_EQ(describe(find(path("app"), "*", "libd*")),
            (std::vector<std::string>{"libdep.so:demo:dep_mark"}));
  EXPECT_EQ(describe(find(path("app"), "*", path("lib/libdep.so"))),
            (std::vector<std::string>{"libdep.so:demo:dep_mark"}));

  MarkerQueryResult none = find(path("app"), "*", "libnothing*");
  EXPECT_EQ(none.error,
            "no library matching \"libnothing*\" among those " + path("app") + " needs");
  MarkerQueryResult missing = find(path("app"), "*", "/no/such/lib.so");
  EXPECT_EQ(missing.error, "no such file: /no/such/lib.so");
}

TEST_F(MarkerCatalogTest, SystemLibraryThroughLibrary) {
  MarkerQueryResult r = find(path("app"), "throw", "libstdc++.so*");
  ASSERT_EQ(r.error, "");
  ASSERT_FALSE(r.sites.empty()) << "libstdc++ has a `throw` marker";
  EXPECT_TRUE(LibraryResolver::isSystemLibrary(r.sites[0].binary)) << r.sites[0].binary;
  EXPECT_EQ(r.sites[0].site.provider, "libstdcxx");
}

TEST_F(MarkerCatalogTest, ArgumentSymbolsResolved) {
  MarkerQueryResult r = find(path("app"), "app_*", "", "demo");
  ASSERT_EQ(r.sites.size(), 2u);
  const MarkerSite &global = r.sites[0].site;
  ASSERT_EQ(global.args.size(), 2u) << global.rawArgs;
  ASSERT_TRUE(std::holds_alternative<MemoryOperand>(global.args[0].operand)) << global.rawArgs;
  const auto &counter = std::get<MemoryOperand>(global.args[0].operand);
  EXPECT_EQ(counter.symbol, "counter");
  EXPECT_TRUE(counter.ripRelative);
  EXPECT_EQ(counter.symbolAddress, nmAddress(path("app"), "counter"));
  const auto &hidden = std::get<MemoryOperand>(global.args[1].operand);
  EXPECT_EQ(hidden.symbol, "hidden_counter");
  EXPECT_EQ(hidden.symbolAddress, nmAddress(path("app"), "hidden_counter"));

  const MarkerSite &imm = r.sites[1].site;
  ASSERT_EQ(imm.args.size(), 2u) << imm.rawArgs;
  const auto &table = std::get<ImmediateOperand>(imm.args[0].operand);
  EXPECT_EQ(table.symbol, "table");
  EXPECT_EQ(table.value, 16);
  EXPECT_EQ(table.symbolAddress, nmAddress(path("app"), "table"));
  const auto &unknown = std::get<ImmediateOperand>(imm.args[1].operand);
  EXPECT_EQ(unknown.symbol, "no_such_symbol");
  EXPECT_FALSE(unknown.symbolAddress); // left for pass 2 to report

  // A library's file-local variable, through its .symtab.
  MarkerQueryResult dep = find(path("app"), "dep_mark");
  ASSERT_EQ(dep.sites.size(), 1u);
  const auto &depCounter = std::get<MemoryOperand>(dep.sites[0].site.args[0].operand);
  EXPECT_EQ(depCounter.symbol, "dep_counter");
  EXPECT_EQ(depCounter.symbolAddress, nmAddress(path("lib/libdep.so"), "dep_counter"));
}

TEST_F(MarkerCatalogTest, StrippedProgramResolvesThroughDynsymOnly) {
  MarkerQueryResult r = find(path("app_stripped"), "app_global");
  ASSERT_EQ(r.sites.size(), 1u);
  const MarkerSite &site = r.sites[0].site;
  EXPECT_EQ(std::get<MemoryOperand>(site.args[0].operand).symbolAddress,
            nmAddress(path("app"), "counter"));
  EXPECT_FALSE(std::get<MemoryOperand>(site.args[1].operand).symbolAddress);
}

TEST_F(MarkerCatalogTest, BareProcessUsesTargetCommand) {
  MarkerQuery q;
  q.name = "app_start";
  MarkerQueryResult none = MarkerCatalog().find(q);
  EXPECT_EQ(none.error, "process.mark needs a target: use process(\"PATH\"), -c CMD or -x PID");
  q.targetCommand = path("app");
  MarkerQueryResult r = MarkerCatalog().find(q);
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(describe(r), (std::vector<std::string>{"app:other:app_start"}));
}

TEST_F(MarkerCatalogTest, ErrorsNameTheFile) {
  EXPECT_EQ(find("/no/such/program", "*").error, "no such file: /no/such/program");
  EXPECT_EQ(find(path("notes.txt"), "*").error, "not an ELF file: " + path("notes.txt"));
  EXPECT_EQ(find(dir_.string(), "*").error, "not an ELF file: " + path("."));
  EXPECT_EQ(find("sonde-no-such-program-anywhere", "*").error,
            "no such file: sonde-no-such-program-anywhere (not found in $PATH)");
}

TEST_F(MarkerCatalogTest, ResolveExecutableSearchesPath) {
  std::string error;
  std::optional<std::string> sh = MarkerCatalog::resolveExecutable("sh", error);
  ASSERT_TRUE(sh) << error;
  EXPECT_TRUE(fs::path(*sh).is_absolute());
  EXPECT_EQ(*sh, fs::canonical(*sh).string());

  const char *saved = std::getenv("PATH");
  std::string savedValue = saved ? saved : "";
  setenv("PATH", ("/nonexistent:" + dir_.string()).c_str(), 1);
  std::optional<std::string> app = MarkerCatalog::resolveExecutable("app", error);
  std::optional<std::string> text = MarkerCatalog::resolveExecutable("notes.txt", error);
  setenv("PATH", savedValue.c_str(), 1);
  EXPECT_EQ(app, path("app"));
  EXPECT_FALSE(text); // not executable: execvp would not run it either
}

TEST_F(MarkerCatalogTest, RebuiltFileIsReadAgain) {
  ASSERT_EQ(run("cp app app_changing"), "");
  EXPECT_EQ(find(path("app_changing"), "dep_*").sites.size(), 1u);
  // Same path, new contents (a program without libdep): the cache must notice.
  ASSERT_EQ(run("cc -O2 -o app_changing.tmp inner.c -shared -fPIC && "
                "mv app_changing.tmp app_changing"),
            "");
  MarkerQueryResult r = find(path("app_changing"), "*");
  EXPECT_EQ(r.error, "");
  EXPECT_EQ(describe(r), (std::vector<std::string>{"app_changing:demo:inner_mark"}));
}

// process("GLOB"): every ELF file the glob matches, by canonical path, each once
// (a link to one is that one); other files are passed over, and a glob with no
// ELF file among its matches is an error naming it.
TEST_F(MarkerCatalogTest, ProcessGlobNamesEachElfFileOnce) {
  ASSERT_EQ(run("rm -rf globbed && mkdir globbed globbed/sub && cp app globbed/one && "
                "cp app globbed/two && ln -s one globbed/link && cp notes.txt globbed/notes"),
            "");
  std::string glob = dir_.string() + "/globbed/";
  EXPECT_TRUE(MarkerCatalog::isProcessGlob(glob + "*"));
  EXPECT_FALSE(MarkerCatalog::isProcessGlob(path("app")));
  std::string error;
  std::optional<std::vector<std::string>> files =
      MarkerCatalog::expandProcessGlob(glob + "*", error);
  ASSERT_TRUE(files) << error;
  EXPECT_EQ(*files, (std::vector<std::string>{path("globbed/one"), path("globbed/two")}));

  EXPECT_FALSE(MarkerCatalog::expandProcessGlob(glob + "zz*", error));
  EXPECT_EQ(error, "no file matches process(\"" + glob + "zz*\")");
  EXPECT_FALSE(MarkerCatalog::expandProcessGlob(glob + "[ns]*", error));
  EXPECT_EQ(error, "no ELF file matches process(\"" + glob + "[ns]*\") (2 other files do)");
}

TEST(MarkerCatalogNames, DashesSpellDoubleUnderscores) {
  EXPECT_EQ(MarkerCatalog::scriptMarkerName("gc-start"), "gc__start");
  EXPECT_EQ(MarkerCatalog::scriptMarkerName("a-b-*"), "a__b__*");
  EXPECT_EQ(MarkerCatalog::scriptMarkerName("gc__done"), "gc__done");
}

// A FIFO (or device) named as the process is refused without being opened: opening
// a FIFO with no writer would block pass 2 for ever.
TEST(MarkerCatalogFiles, NonRegularFilesAreNotElf) {
  fs::path fifo = fs::path(testing::TempDir()) / ("sonde_fifo_" + std::to_string(getpid()));
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  MarkerCatalog catalog;
  MarkerQuery q;
  q.process = fifo.string();
  q.name = "*";
  auto r = catalog.find(q);
  EXPECT_EQ(r.error, "not an ELF file: " + fs::canonical(fifo).string());
  q.process = "/dev/zero";
  EXPECT_EQ(catalog.find(q).error, "not an ELF file: /dev/zero");
  fs::remove(fifo);
}

TEST(LibraryResolverTest, SystemLibraryDirectories) {
  EXPECT_TRUE(LibraryResolver::isSystemLibrary("/usr/lib/x86_64-linux-gnu/libc.so.6"));
  EXPECT_TRUE(LibraryResolver::isSystemLibrary("/lib/libfoo.so"));
  EXPECT_TRUE(LibraryResolver::isSystemLibrary("/usr/lib64/libfoo.so"));
  EXPECT_TRUE(LibraryResolver::isSystemLibrary("/lib64/libfoo.so"));
  EXPECT_TRUE(LibraryResolver::isSystemLibrary("/usr/lib/i386-linux-gnu/libfoo.so"));
  EXPECT_FALSE(LibraryResolver::isSystemLibrary("/usr/local/lib/libfoo.so"));
  EXPECT_FALSE(LibraryResolver::isSystemLibrary("/usr/lib/x86_64-linux-gnu/sub/libfoo.so"));
  EXPECT_FALSE(LibraryResolver::isSystemLibrary("/opt/app/lib/libfoo.so"));
  EXPECT_FALSE(LibraryResolver::isSystemLibrary("/home/u/lib/libfoo.so"));
}

} // namespace
