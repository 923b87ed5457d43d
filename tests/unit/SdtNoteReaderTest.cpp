// SdtNoteReader against `readelf -n` on system libraries that carry stapsdt notes,
// and against small targets compiled here with <sys/sdt.h> (1-byte NOP sites) and
// with a hand-written note around the 5-byte NOP sonde/sdt.h uses.
#include "probes/marker/SdtNoteReader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

using namespace sonde::probes::marker;
namespace fs = std::filesystem;

namespace {

std::string runCommand(const std::string &command, int &status) {
  std::string output;
  FILE *pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    status = -1;
    return output;
  }
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0)
    output.append(buffer, n);
  status = pclose(pipe);
  return output;
}

// What readelf prints for one stapsdt note.
struct ReadelfNote {
  std::string provider, name, args;
  uint64_t pc = 0, base = 0, semaphore = 0;
};

std::string trimmed(std::string s) {
  size_t b = s.find_first_not_of(" \t");
  size_t e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

std::vector<ReadelfNote> readelfNotes(const std::string &path) {
  int status = 0;
  std::istringstream out(runCommand("readelf -n '" + path + "' 2>/dev/null", status));
  std::vector<ReadelfNote> notes;
  std::string line;
  while (std::getline(out, line)) {
    line = trimmed(line);
    if (line.starts_with("Provider: ")) {
      notes.emplace_back();
      notes.back().provider = line.substr(10);
    } else if (notes.empty()) {
      continue;
    } else if (line.starts_with("Name: ")) {
      notes.back().name = line.substr(6);
    } else if (line.starts_with("Location: ")) {
      unsigned long long pc, base, sem;
      if (std::sscanf(line.c_str(), "Location: %llx, Base: %llx, Semaphore: %llx", &pc, &base,
                      &sem) == 3) {
        notes.back().pc = pc;
        notes.back().base = base;
        notes.back().semaphore = sem;
      }
    } else if (line.starts_with("Arguments:")) {
      notes.back().args = trimmed(line.substr(10));
    }
  }
  return notes;
}

void expectMatchesReadelf(const std::string &path) {
  if (!fs::exists(path))
    GTEST_SKIP() << path << " is not installed";
  std::vector<ReadelfNote> expected = readelfNotes(path);
  ASSERT_FALSE(expected.empty()) << "readelf found no stapsdt notes in " << path;
  std::string error;
  auto sites = SdtNoteReader::read(path, error);
  ASSERT_TRUE(sites) << error;
  ASSERT_EQ(sites->size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const MarkerSite &site = (*sites)[i];
    SCOPED_TRACE(site.provider + ":" + site.name);
    EXPECT_EQ(site.provider, expected[i].provider);
    EXPECT_EQ(site.name, expected[i].name);
    EXPECT_EQ(site.pc, expected[i].pc); // not prelinked: no adjustment
    EXPECT_EQ(site.recordedBase, expected[i].base);
    EXPECT_EQ(site.actualBase, expected[i].base);
    EXPECT_EQ(site.semaphore, expected[i].semaphore);
    EXPECT_EQ(site.rawArgs, expected[i].args);
    EXPECT_EQ(site.argError, "");
    EXPECT_EQ(site.args.size(),
              expected[i].args.empty()
                  ? 0u
                  : 1u + static_cast<size_t>(
                             std::count(expected[i].args.begin(), expected[i].args.end(), ' ')));
    EXPECT_EQ(site.nop, SiteNop::OneByte); // distribution builds use sys/sdt.h
  }
}

TEST(SdtNoteReaderTest, LibstdcxxMatchesReadelf) {
  expectMatchesReadelf("/usr/lib/x86_64-linux-gnu/libstdc++.so.6");
}

TEST(SdtNoteReaderTest, LibpythonMatchesReadelf) {
  expectMatchesReadelf("/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0");
}

TEST(SdtNoteReaderTest, ElfWithoutNotesGivesNoSites) {
  std::string error;
  auto sites = SdtNoteReader::read("/usr/lib/x86_64-linux-gnu/libc.so.6", error);
  ASSERT_TRUE(sites) << error;
  EXPECT_TRUE(readelfNotes("/usr/lib/x86_64-linux-gnu/libc.so.6").empty());
  EXPECT_TRUE(sites->empty());
}

TEST(SdtNoteReaderTest, MissingFileErrorNamesIt) {
  std::string error;
  EXPECT_FALSE(SdtNoteReader::read("/nonexistent/sonde-no-such-file", error));
  EXPECT_EQ(error, "/nonexistent/sonde-no-such-file: No such file or directory");
}

TEST(SdtNoteReaderTest, NonElfErrorNamesIt) {
  std::string path = testing::TempDir() + "sonde_not_elf.txt";
  std::ofstream(path) << "just text, not an ELF file\n";
  std::string error;
  EXPECT_FALSE(SdtNoteReader::read(path, error));
  EXPECT_EQ(error, path + ": not an ELF file");
  fs::remove(path);
}

// A target with stock sys/sdt.h markers (with semaphores) and one marker whose
// note is written by hand around a 5-byte NOP, as sonde/sdt.h lays it out.
constexpr const char *kTargetSource = R"(
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>
unsigned short demo_hello_semaphore __attribute__((section(".probes")));
unsigned short demo_ready_semaphore __attribute__((section(".probes")));
unsigned short demo_noargs_semaphore __attribute__((section(".probes")));
long counter = 5;
__attribute__((noinline)) int work(int n, const char *s, long *p) {
  DTRACE_PROBE3(demo, hello, n, s, p);
  if (demo_ready_semaphore)
    DTRACE_PROBE1(demo, ready, counter);
  DTRACE_PROBE(demo, noargs);
  __asm__ __volatile__(
      "990: .byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"
      ".pushsection .note.stapsdt, \"?\", \"note\"\n"
      ".balign 4\n"
      ".4byte 992f-991f, 994f-993f, 3\n"
      "991: .asciz \"stapsdt\"\n"
      "992: .balign 4\n"
      "993: .8byte 990b, _.stapsdt.base, 0\n"
      ".asciz \"sonde_test\"\n"
      ".asciz \"five\"\n"
      ".asciz \"-4@%0 4@$7\"\n"
      "994: .balign 4\n"
      ".popsection\n" ::"r"(n));
  return n + 1;
}
int main(int argc, char **argv) { long x = argc; return work(argc, argv[0], &x) == 0; }
)";

// A scratch directory removed however the test ends.
struct ScratchDir {
  fs::path path = fs::path(testing::TempDir()) / ("sonde_sdt_" + std::to_string(getpid()));
  ScratchDir() { fs::create_directories(path); }
  ~ScratchDir() { fs::remove_all(path); }
};

class CompiledTargetTest : public testing::TestWithParam<const char *> {};

TEST_P(CompiledTargetTest, ReadsSysSdtAndFiveByteSites) {
  ScratchDir scratch;
  const fs::path &dir = scratch.path;
  fs::path source = dir / "target.c";
  fs::path binary = dir / "target.out";
  std::ofstream(source) << kTargetSource;
  int status = 0;
  std::string log = runCommand(std::string("cc ") + GetParam() + " -o '" + binary.string() + "' '" +
                                   source.string() + "' 2>&1",
                               status);
  ASSERT_EQ(status, 0) << log;

  std::string error;
  auto sites = SdtNoteReader::read(binary.string(), error);
  ASSERT_TRUE(sites) << error;
  std::vector<ReadelfNote> expected = readelfNotes(binary.string());
  ASSERT_EQ(sites->size(), 4u);
  ASSERT_EQ(expected.size(), 4u);
  for (size_t i = 0; i < sites->size(); ++i) {
    const MarkerSite &site = (*sites)[i];
    SCOPED_TRACE(site.name);
    EXPECT_EQ(site.provider, expected[i].provider);
    EXPECT_EQ(site.name, expected[i].name);
    EXPECT_EQ(site.pc, expected[i].pc);
    EXPECT_EQ(site.semaphore, expected[i].semaphore);
    EXPECT_EQ(site.rawArgs, expected[i].args);
    EXPECT_EQ(site.argError, "");
    ASSERT_TRUE(site.actualBase);
    EXPECT_EQ(*site.actualBase, site.recordedBase);
  }
  const MarkerSite &hello = (*sites)[0];
  EXPECT_EQ(hello.provider, "demo");
  EXPECT_EQ(hello.name, "hello");
  EXPECT_EQ(hello.nop, SiteNop::OneByte);
  EXPECT_NE(hello.semaphore, 0u);
  ASSERT_EQ(hello.args.size(), 3u);
  EXPECT_EQ(hello.args[0].size, 4);
  EXPECT_TRUE(hello.args[0].isSigned);
  EXPECT_EQ(hello.args[1].size, 8);
  EXPECT_FALSE(hello.args[1].isSigned);
  EXPECT_EQ(hello.args[2].size, 8);

  const MarkerSite &ready = (*sites)[1];
  EXPECT_EQ(ready.name, "ready");
  EXPECT_NE(ready.semaphore, 0u);
  EXPECT_NE(ready.semaphore, hello.semaphore);
  EXPECT_EQ(ready.nop, SiteNop::OneByte);
  ASSERT_EQ(ready.args.size(), 1u);
  EXPECT_EQ(ready.args[0].size, 8);
  EXPECT_TRUE(ready.args[0].isSigned);

  EXPECT_EQ((*sites)[2].name, "noargs");
  EXPECT_TRUE((*sites)[2].args.empty());
  EXPECT_EQ((*sites)[2].nop, SiteNop::OneByte);

  const MarkerSite &five = (*sites)[3];
  EXPECT_EQ(five.provider, "sonde_test");
  EXPECT_EQ(five.name, "five");
  EXPECT_EQ(five.nop, SiteNop::FiveByte);
  EXPECT_EQ(five.semaphore, 0u);
  ASSERT_EQ(five.args.size(), 2u);
  EXPECT_TRUE(std::holds_alternative<RegisterOperand>(five.args[0].operand));
  EXPECT_EQ(std::get<RegisterOperand>(five.args[0].operand).reg.width, 4);
  ASSERT_TRUE(std::holds_alternative<ImmediateOperand>(five.args[1].operand));
  EXPECT_EQ(std::get<ImmediateOperand>(five.args[1].operand).value, 7);

  // Move .stapsdt.base as prelink would after the notes were written: pc and
  // semaphores follow it, as sys/sdt.h consumers adjust them.
  fs::path moved = dir / "moved.out";
  log = runCommand("objcopy --change-section-vma .stapsdt.base+16 '" + binary.string() + "' '" +
                       moved.string() + "' 2>&1",
                   status);
  ASSERT_EQ(status, 0) << log;
  auto movedSites = SdtNoteReader::read(moved.string(), error);
  ASSERT_TRUE(movedSites) << error;
  ASSERT_EQ(movedSites->size(), sites->size());
  for (size_t i = 0; i < sites->size(); ++i) {
    const MarkerSite &site = (*movedSites)[i];
    EXPECT_EQ(site.recordedBase, (*sites)[i].recordedBase);
    EXPECT_EQ(site.actualBase, (*sites)[i].recordedBase + 16);
    EXPECT_EQ(site.pc, (*sites)[i].pc + 16);
    uint64_t semaphore = (*sites)[i].semaphore;
    EXPECT_EQ(site.semaphore, semaphore == 0 ? 0 : semaphore + 16); // 0 stays "none"
  }
}

INSTANTIATE_TEST_SUITE_P(Builds, CompiledTargetTest,
                         testing::Values("-O0 -fPIE -pie", "-O2 -fno-pie -no-pie",
                                         "-O2 -fPIC -shared"));

} // namespace
