#include "probes/marker/SdtNoteReader.h"

#include "probes/marker/ArgSpecParser.h"
#include "runtime/symbols/ElfFile.h"

#include <algorithm>
#include <cstring>
#include <gelf.h>
#include <libelf.h>
#include <memory>
#include <string_view>

namespace sonde::probes::marker {

using symbols::ElfFile;
namespace {

constexpr std::string_view kNoteOwner = "stapsdt";
constexpr uint32_t kNoteType = 3; // NT_STAPSDT
constexpr unsigned char kFiveByteNop[] = {0x0f, 0x1f, 0x44, 0x00, 0x00};

// Reads the note's address fields in the file's own width and byte order.
uint64_t readAddress(const unsigned char *p, size_t width, bool bigEndian) {
  uint64_t v = 0;
  for (size_t i = 0; i < width; ++i) {
    size_t byte = bigEndian ? i : width - 1 - i;
    v = (v << 8) | p[byte];
  }
  return v;
}

std::optional<uint64_t> stapsdtBaseAddress(Elf *elf, size_t shstrndx) {
  Elf_Scn *scn = nullptr;
  while ((scn = elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr)
      continue;
    const char *name = elf_strptr(elf, shstrndx, shdr.sh_name);
    if (name && std::string_view(name) == ".stapsdt.base")
      return shdr.sh_addr;
  }
  return std::nullopt;
}

// Which NOP the file's loaded text holds at `pc`, found through the program headers
// so that files without section headers work too.
SiteNop nopAt(Elf *elf, uint64_t pc) {
  size_t fileSize = 0;
  const char *raw = elf_rawfile(elf, &fileSize);
  size_t count = 0;
  if (raw == nullptr || elf_getphdrnum(elf, &count) != 0)
    return SiteNop::None;
  for (size_t i = 0; i < count; ++i) {
    GElf_Phdr phdr;
    if (gelf_getphdr(elf, static_cast<int>(i), &phdr) == nullptr || phdr.p_type != PT_LOAD)
      continue;
    if (pc < phdr.p_vaddr || pc - phdr.p_vaddr >= phdr.p_filesz)
      continue;
    uint64_t offset = phdr.p_offset + (pc - phdr.p_vaddr);
    uint64_t available = phdr.p_filesz - (pc - phdr.p_vaddr);
    if (offset >= fileSize)
      return SiteNop::None;
    available = std::min<uint64_t>(available, fileSize - offset);
    const auto *bytes = reinterpret_cast<const unsigned char *>(raw + offset);
    if (available >= sizeof kFiveByteNop &&
        std::memcmp(bytes, kFiveByteNop, sizeof kFiveByteNop) == 0)
      return SiteNop::FiveByte;
    return bytes[0] == 0x90 ? SiteNop::OneByte : SiteNop::None;
  }
  return SiteNop::None;
}

// Decodes one note's descriptor: three addresses, then provider, name and arguments
// as NUL-terminated strings.
std::optional<MarkerSite> decodeNote(const unsigned char *desc, size_t size, size_t width,
                                     bool bigEndian, std::string &why) {
  if (size < 3 * width) {
    why = "descriptor of " + std::to_string(size) + " bytes is too short";
    return std::nullopt;
  }
  MarkerSite site;
  site.pc = readAddress(desc, width, bigEndian);
  site.recordedBase = readAddress(desc + width, width, bigEndian);
  site.semaphore = readAddress(desc + 2 * width, width, bigEndian);
  std::string_view strings(reinterpret_cast<const char *>(desc + 3 * width), size - 3 * width);
  std::string *fields[] = {&site.provider, &site.name, &site.rawArgs};
  for (std::string *field : fields) {
    size_t nul = strings.find('\0');
    if (nul == std::string_view::npos) {
      why = "unterminated string in the descriptor";
      return std::nullopt;
    }
    *field = std::string(strings.substr(0, nul));
    strings.remove_prefix(nul + 1);
  }
  if (site.provider.empty() || site.name.empty()) {
    why = "empty provider or marker name";
    return std::nullopt;
  }
  return site;
}

} // namespace

std::optional<std::vector<MarkerSite>> SdtNoteReader::read(const std::string &path,
                                                           std::string &error) {
  auto fail = [&](const std::string &why) {
    error = path + ": " + why;
    return std::nullopt;
  };
  std::unique_ptr<ElfFile> elf = ElfFile::open(path, error);
  if (!elf)
    return std::nullopt;
  int elfClass = gelf_getclass(elf->get());
  const char *ident = elf_getident(elf->get(), nullptr);
  size_t shstrndx = 0;
  if (elfClass == ELFCLASSNONE || ident == nullptr || elf_getshdrstrndx(elf->get(), &shstrndx) != 0)
    return fail(std::string("malformed ELF header: ") + elf_errmsg(-1));
  size_t width = elfClass == ELFCLASS64 ? 8 : 4;
  bool bigEndian = ident[EI_DATA] == ELFDATA2MSB;
  std::optional<uint64_t> actualBase = stapsdtBaseAddress(elf->get(), shstrndx);

  std::vector<MarkerSite> sites;
  Elf_Scn *scn = nullptr;
  while ((scn = elf_nextscn(elf->get(), scn)) != nullptr) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_type != SHT_NOTE)
      continue;
    Elf_Data *data = elf_getdata(scn, nullptr);
    if (data == nullptr)
      return fail(std::string("cannot read a note section: ") + elf_errmsg(-1));
    GElf_Nhdr note;
    size_t nameOffset = 0, descOffset = 0;
    for (size_t offset = 0;
         (offset = gelf_getnote(data, offset, &note, &nameOffset, &descOffset)) > 0;) {
      const auto *bytes = static_cast<const unsigned char *>(data->d_buf);
      std::string_view owner(reinterpret_cast<const char *>(bytes + nameOffset),
                             note.n_namesz > 0 ? note.n_namesz - 1 : 0);
      if (note.n_type != kNoteType || owner != kNoteOwner)
        continue;
      std::string why;
      std::optional<MarkerSite> site =
          decodeNote(bytes + descOffset, note.n_descsz, width, bigEndian, why);
      if (!site)
        return fail("bad stapsdt note #" + std::to_string(sites.size() + 1) + ": " + why);
      site->actualBase = actualBase;
      if (actualBase && *actualBase != site->recordedBase) {
        uint64_t delta = *actualBase - site->recordedBase;
        site->pc += delta;
        if (site->semaphore != 0)
          site->semaphore += delta;
      }
      if (std::optional<std::vector<ArgSpec>> args =
              ArgSpecParser::parseList(site->rawArgs, site->argError))
        site->args = std::move(*args);
      site->nop = nopAt(elf->get(), site->pc);
      sites.push_back(std::move(*site));
    }
  }
  return sites;
}

} // namespace sonde::probes::marker
