// Checks what include/sonde/sdt.h puts into real binaries: the .note.stapsdt notes
// (read here with libelf), the 5-byte NOP at every site, the semaphores in .probes,
// that binutils' readelf lists the markers, and that the targets still run correctly.
#include <gelf.h>
#include <libelf.h>

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

namespace {

struct Argument {
  int size = 0; // negative for signed types, as in sys/sdt.h
  std::string operand;
};

struct Site {
  uint64_t pc = 0;
  uint64_t base = 0;
  uint64_t semaphore = 0;
  std::string provider;
  std::string name;
  std::string argText;
  std::vector<Argument> args;
};

struct SectionInfo {
  std::string name;
  uint64_t addr = 0;
  uint64_t size = 0;
  uint64_t offset = 0;
  uint64_t flags = 0;
  uint32_t type = 0;
};

// Everything the tests need from one ELF file, read once.
struct ElfImage {
  uint16_t elfType = 0;
  std::vector<SectionInfo> sections;
  std::vector<Site> sites;
  std::vector<unsigned char> bytes; // the whole file

  const SectionInfo *section(const std::string &name) const {
    for (const SectionInfo &s : sections)
      if (s.name == name)
        return &s;
    return nullptr;
  }
};

std::vector<Argument> parseArguments(const std::string &text) {
  std::vector<Argument> args;
  std::istringstream in(text);
  std::string word;
  while (in >> word) {
    Argument arg;
    size_t at = word.find('@');
    if (at == std::string::npos || at == 0)
      ADD_FAILURE() << "argument without SIZE@: '" << word << "' in '" << text << "'";
    else {
      arg.size = std::stoi(word.substr(0, at));
      arg.operand = word.substr(at + 1);
    }
    args.push_back(arg);
  }
  return args;
}

uint64_t readAddress(const unsigned char *p) {
  uint64_t value;
  std::memcpy(&value, p, sizeof value);
  return value;
}

// Decodes one stapsdt note descriptor: pc, base, semaphore, then three strings.
std::optional<Site> decodeNote(const unsigned char *desc, size_t size) {
  if (size < 3 * 8)
    return std::nullopt;
  Site site;
  site.pc = readAddress(desc);
  site.base = readAddress(desc + 8);
  site.semaphore = readAddress(desc + 16);
  const char *text = reinterpret_cast<const char *>(desc + 24);
  const char *end = reinterpret_cast<const char *>(desc + size);
  std::array<std::string *, 3> fields = {&site.provider, &site.name, &site.argText};
  for (std::string *field : fields) {
    const char *nul = std::find(text, end, '\0');
    if (nul == end)
      return std::nullopt;
    field->assign(text, nul);
    text = nul + 1;
  }
  site.args = parseArguments(site.argText);
  return site;
}

std::optional<ElfImage> readElf(const char *path) {
  ElfImage image;
  FILE *file = std::fopen(path, "rb");
  if (file == nullptr)
    return std::nullopt;
  unsigned char chunk[65536];
  size_t n;
  while ((n = std::fread(chunk, 1, sizeof chunk, file)) > 0)
    image.bytes.insert(image.bytes.end(), chunk, chunk + n);
  std::fclose(file);

  elf_version(EV_CURRENT);
  std::unique_ptr<Elf, int (*)(Elf *)> elf(
      elf_memory(reinterpret_cast<char *>(image.bytes.data()), image.bytes.size()), elf_end);
  GElf_Ehdr header;
  if (!elf || gelf_getehdr(elf.get(), &header) == nullptr)
    return std::nullopt;
  image.elfType = header.e_type;
  size_t stringSection = 0;
  if (elf_getshdrstrndx(elf.get(), &stringSection) != 0)
    return std::nullopt;

  for (Elf_Scn *scn = elf_nextscn(elf.get(), nullptr); scn; scn = elf_nextscn(elf.get(), scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr)
      return std::nullopt;
    const char *name = elf_strptr(elf.get(), stringSection, shdr.sh_name);
    image.sections.push_back({name ? name : "", shdr.sh_addr, shdr.sh_size, shdr.sh_offset,
                              shdr.sh_flags, shdr.sh_type});
    if (shdr.sh_type != SHT_NOTE)
      continue;
    Elf_Data *data = elf_getdata(scn, nullptr);
    GElf_Nhdr note;
    size_t nameOffset, descOffset;
    for (size_t offset = 0;
         data && (offset = gelf_getnote(data, offset, &note, &nameOffset, &descOffset)) > 0;) {
      const auto *base = static_cast<const unsigned char *>(data->d_buf);
      if (note.n_type != 3 || note.n_namesz != 8 ||
          std::memcmp(base + nameOffset, "stapsdt", 8) != 0)
        continue;
      EXPECT_STREQ(name, ".note.stapsdt");
      std::optional<Site> site = decodeNote(base + descOffset, note.n_descsz);
      if (!site)
        return std::nullopt;
      image.sites.push_back(*site);
    }
  }
  return image;
}

// Runs a command, returning its standard output; the exit status goes to *status.
std::string runCommand(const std::string &command, int *status) {
  std::string output;
  FILE *pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    *status = -1;
    return output;
  }
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0)
    output.append(buffer, n);
  *status = pclose(pipe);
  return output;
}

// What one marker site must look like: its name and argument sizes.
struct ExpectedSite {
  std::string name;
  std::vector<int> sizes;
  bool operator<(const ExpectedSite &other) const {
    return std::tie(name, sizes) < std::tie(other.name, other.sizes);
  }
  bool operator==(const ExpectedSite &other) const {
    return name == other.name && sizes == other.sizes;
  }
};

std::vector<ExpectedSite> sharedSites() {
  return {{"zero", {}},
          {"one", {-4}},
          {"one", {-8}},
          {"two", {8, -4}},
          {"twelve", {-1, 1, -2, 2, -4, 4, -8, 8, 8, 8, -8, 1}},
          {"guarded", {2}}};
}

std::vector<ExpectedSite> cppSites() {
  std::vector<ExpectedSite> sites = sharedSites();
  sites.push_back({"tmpl", {-4}});
  sites.push_back({"tmpl", {8}});
  return sites;
}

// Two translation units each have a `measured` site.
std::vector<ExpectedSite> libSites() {
  return {{"measured", {8, 8}}, {"measured", {8, 8}}, {"guarded", {-2}}};
}

// An operand as GCC and clang print them on x86-64: register, immediate or memory.
bool isOperand(const std::string &operand) {
  if (operand.size() < 2)
    return false;
  if (operand[0] == '%' || operand[0] == '$')
    return true;
  return operand.find('(') != std::string::npos && operand.back() == ')';
}

void checkImage(const char *path, const std::string &provider, std::vector<ExpectedSite> expected,
                uint16_t elfType) {
  SCOPED_TRACE(path);
  std::optional<ElfImage> image = readElf(path);
  ASSERT_TRUE(image) << "cannot read ELF notes of " << path;
  EXPECT_EQ(image->elfType, elfType);

  std::vector<ExpectedSite> actual;
  for (const Site &site : image->sites) {
    EXPECT_EQ(site.provider, provider);
    ExpectedSite shape{site.name, {}};
    for (const Argument &arg : site.args) {
      shape.sizes.push_back(arg.size);
      EXPECT_TRUE(isOperand(arg.operand))
          << site.name << ": bad operand '" << arg.operand << "' in '" << site.argText << "'";
    }
    actual.push_back(shape);
  }
  std::sort(actual.begin(), actual.end());
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(actual, expected);

  const SectionInfo *base = image->section(".stapsdt.base");
  const SectionInfo *probes = image->section(".probes");
  ASSERT_NE(base, nullptr);
  ASSERT_NE(probes, nullptr);
  EXPECT_EQ(base->size, 1u);
  EXPECT_EQ(probes->flags & (SHF_ALLOC | SHF_WRITE), uint64_t(SHF_ALLOC | SHF_WRITE));

  std::map<std::string, uint64_t> semaphoreOf;
  for (const Site &site : image->sites) {
    SCOPED_TRACE(site.name);
    EXPECT_EQ(site.base, base->addr);
    // The probe site: exactly the 5-byte NOP, inside executable code.
    const SectionInfo *code = nullptr;
    for (const SectionInfo &s : image->sections)
      if ((s.flags & SHF_EXECINSTR) && site.pc >= s.addr && site.pc + 5 <= s.addr + s.size)
        code = &s;
    ASSERT_NE(code, nullptr) << "pc 0x" << std::hex << site.pc << " is not in code";
    const unsigned char nop5[] = {0x0f, 0x1f, 0x44, 0x00, 0x00};
    uint64_t offset = code->offset + (site.pc - code->addr);
    ASSERT_LE(offset + 5, image->bytes.size());
    EXPECT_EQ(std::memcmp(image->bytes.data() + offset, nop5, 5), 0)
        << "pc 0x" << std::hex << site.pc;
    // The semaphore: a 2-byte counter in .probes, one per marker name.
    EXPECT_GE(site.semaphore, probes->addr);
    EXPECT_LE(site.semaphore + 2, probes->addr + probes->size);
    auto [it, inserted] = semaphoreOf.emplace(site.name, site.semaphore);
    EXPECT_EQ(it->second, site.semaphore) << "sites of one marker share its semaphore";
  }
  std::vector<uint64_t> distinct;
  for (const auto &[name, address] : semaphoreOf)
    distinct.push_back(address);
  std::sort(distinct.begin(), distinct.end());
  EXPECT_EQ(std::unique(distinct.begin(), distinct.end()), distinct.end())
      << "two markers share a semaphore";

  int status = 0;
  std::string listing = runCommand(std::string("readelf -n '") + path + "'", &status);
  EXPECT_EQ(status, 0);
  EXPECT_NE(listing.find("stapsdt"), std::string::npos);
  EXPECT_NE(listing.find("Provider: " + provider), std::string::npos) << listing;
  for (const ExpectedSite &site : expected)
    EXPECT_NE(listing.find("Name: " + site.name + "\n"), std::string::npos) << listing;
}

const Site *findSite(const std::vector<Site> &sites, const std::string &name) {
  for (const Site &site : sites)
    if (site.name == name)
      return &site;
  return nullptr;
}

// Constants must be described as immediates, with the value the program passed.
void checkConstants(const char *path) {
  SCOPED_TRACE(path);
  std::optional<ElfImage> image = readElf(path);
  ASSERT_TRUE(image);
  const Site *two = findSite(image->sites, "two");
  const Site *twelve = findSite(image->sites, "twelve");
  ASSERT_TRUE(two && twelve);
  ASSERT_EQ(two->args.size(), 2u);
  EXPECT_EQ(two->args[1].operand, "$42");
  ASSERT_EQ(twelve->args.size(), 12u);
  EXPECT_EQ(twelve->args[10].operand, "$-9");
}

// The checksum marker_target prints, recomputed with the same conversions.
long expectedSum(long count, bool cpp) {
  long sum = 0;
  for (long i = 0; i < count; ++i) {
    int small = (signed char)(-i) + (unsigned char)i + (short)(-i * 3) + (unsigned short)(i * 5) +
                (int)(-i * 7);
    long value = small + (long)(unsigned)(i * 11) + (long)(-i * 13) +
                 (long)((unsigned long long)i * 17) + (char)('0' + i % 10) + ((i & 1) != 0);
    sum += value + 1 + (cpp ? 1 : 0);
  }
  return sum;
}

void checkRuns(const char *path, bool cpp) {
  SCOPED_TRACE(path);
  for (long count : {0L, 1L, 1000L}) {
    int status = 0;
    std::string output =
        runCommand(std::string("'") + path + "' " + std::to_string(count), &status);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
    EXPECT_EQ(output, "sum=" + std::to_string(expectedSum(count, cpp)) + " enabled=0\n");
  }
}

// A tool attaching increments the semaphore: emulate that by storing 1 into the
// `guarded` semaphore in a copy of the file; SONDE_PROBE_ENABLED must then see it.
void checkSemaphoreIsRead(const char *path, bool cpp) {
  SCOPED_TRACE(path);
  std::optional<ElfImage> image = readElf(path);
  ASSERT_TRUE(image);
  const Site *guarded = findSite(image->sites, "guarded");
  const SectionInfo *probes = image->section(".probes");
  ASSERT_TRUE(guarded && probes);
  ASSERT_EQ(probes->type, uint32_t(SHT_PROGBITS));
  uint64_t offset = probes->offset + (guarded->semaphore - probes->addr);
  ASSERT_LE(offset + 2, image->bytes.size());
  image->bytes[offset] = 1;

  char copy[] = "/tmp/sonde_marker_XXXXXX";
  int fd = mkstemp(copy);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, image->bytes.data(), image->bytes.size()), ssize_t(image->bytes.size()));
  fchmod(fd, 0700);
  close(fd);
  int status = 0;
  std::string output = runCommand(std::string(copy) + " 3", &status);
  unlink(copy);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  EXPECT_EQ(output, "sum=" + std::to_string(expectedSum(3, cpp)) + " enabled=1\n");
}

struct TargetCase {
  const char *path;
  bool cpp;
  bool pie;
};

class MarkerTarget : public ::testing::TestWithParam<TargetCase> {};

TEST_P(MarkerTarget, NotesDescribeEverySite) {
  const TargetCase &target = GetParam();
  checkImage(target.path, "sonde_test", target.cpp ? cppSites() : sharedSites(),
             target.pie ? ET_DYN : ET_EXEC);
}

TEST_P(MarkerTarget, ConstantsAreImmediates) { checkConstants(GetParam().path); }

TEST_P(MarkerTarget, RunsCorrectly) { checkRuns(GetParam().path, GetParam().cpp); }

TEST_P(MarkerTarget, EnabledReadsTheSemaphore) {
  checkSemaphoreIsRead(GetParam().path, GetParam().cpp);
}

INSTANTIATE_TEST_SUITE_P(Builds, MarkerTarget,
                         ::testing::Values(TargetCase{MARKER_C_O0_PIE, false, true},
                                           TargetCase{MARKER_C_O0_NOPIE, false, false},
                                           TargetCase{MARKER_C_O2_PIE, false, true},
                                           TargetCase{MARKER_C_O2_NOPIE, false, false},
                                           TargetCase{MARKER_CPP_O0_PIE, true, true},
                                           TargetCase{MARKER_CPP_O0_NOPIE, true, false},
                                           TargetCase{MARKER_CPP_O2_PIE, true, true},
                                           TargetCase{MARKER_CPP_O2_NOPIE, true, false}),
                         [](const ::testing::TestParamInfo<TargetCase> &info) {
                           std::string name = info.param.path;
                           return name.substr(name.rfind('/') + 1);
                         });

struct LibraryCase {
  const char *library;
  const char *user;
};

class MarkerLibrary : public ::testing::TestWithParam<LibraryCase> {};

TEST_P(MarkerLibrary, NotesDescribeEverySite) {
  checkImage(GetParam().library, "sonde_lib", libSites(), ET_DYN);
}

TEST_P(MarkerLibrary, RunsCorrectly) {
  int status = 0;
  std::string output =
      runCommand(std::string("'") + GetParam().user + "' abc defgh '' xaa", &status);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  EXPECT_EQ(output, "total=11 a=3\n");
}

INSTANTIATE_TEST_SUITE_P(Builds, MarkerLibrary,
                         ::testing::Values(LibraryCase{MARKER_LIB_O0, MARKER_LIB_USER_O0},
                                           LibraryCase{MARKER_LIB_O2, MARKER_LIB_USER_O2}),
                         [](const ::testing::TestParamInfo<LibraryCase> &info) {
                           std::string name = info.param.library;
                           name = name.substr(name.rfind('/') + 1);
                           return name.substr(0, name.find('.'));
                         });

} // namespace
