#include "runtime/symbols/ElfSymbolTable.h"

#include "runtime/symbols/ElfFile.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <gelf.h>

namespace sonde::symbols {

namespace {

// Sections of type `type` holding symbols, read into `out`.
bool readTable(Elf *elf, Elf64_Word type, std::vector<ElfSymbol> &out) {
  bool found = false;
  Elf_Scn *scn = nullptr;
  while ((scn = elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || sh.sh_type != type || sh.sh_entsize == 0)
      continue;
    Elf_Data *data = elf_getdata(scn, nullptr);
    if (!data)
      continue;
    found = true;
    for (size_t i = 0, n = sh.sh_size / sh.sh_entsize; i < n; ++i) {
      GElf_Sym sym;
      if (!gelf_getsym(data, static_cast<int>(i), &sym) || sym.st_shndx == SHN_UNDEF)
        continue;
      int kind = GELF_ST_TYPE(sym.st_info);
      if (kind != STT_FUNC && kind != STT_GNU_IFUNC && kind != STT_OBJECT)
        continue;
      const char *name = elf_strptr(elf, sh.sh_link, sym.st_name);
      if (!name || !*name)
        continue;
      // "__libc_start_main@@GLIBC_2.34": the version is not part of the name.
      std::string plain(name, std::strcspn(name, "@"));
      if (!plain.empty())
        out.push_back(
            {sym.st_value, sym.st_size, std::move(plain), GELF_ST_BIND(sym.st_info) != STB_LOCAL});
    }
  }
  return found;
}

// "/usr/lib/debug/.build-id/ab/cdef....debug" from the GNU build-id note, or "".
std::string debugFileOf(Elf *elf) {
  Elf_Scn *scn = nullptr;
  while ((scn = elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
      continue;
    Elf_Data *data = elf_getdata(scn, nullptr);
    if (!data)
      continue;
    GElf_Nhdr note;
    size_t offset = 0, nameOffset = 0, descOffset = 0;
    while ((offset = gelf_getnote(data, offset, &note, &nameOffset, &descOffset)) > 0) {
      if (note.n_type != NT_GNU_BUILD_ID || note.n_namesz != 4 || note.n_descsz < 2)
        continue;
      const auto *id = static_cast<const unsigned char *>(data->d_buf) + descOffset;
      std::string path = "/usr/lib/debug/.build-id/";
      char hex[3];
      for (size_t i = 0; i < note.n_descsz; ++i) {
        std::snprintf(hex, sizeof hex, "%02x", id[i]);
        path += hex;
        if (i == 0)
          path += '/';
      }
      return path + ".debug";
    }
  }
  return {};
}

} // namespace

std::unique_ptr<ElfSymbolTable> ElfSymbolTable::load(const std::string &path) {
  std::vector<ElfSymbol> symbols;
  std::string error;
  if (std::unique_ptr<ElfFile> file = ElfFile::open(path, error)) {
    // .symtab has the static functions .dynsym lacks; a stripped object may
    // have it in its debug file.
    if (!readTable(file->get(), SHT_SYMTAB, symbols)) {
      std::string debugPath = debugFileOf(file->get());
      std::unique_ptr<ElfFile> debug =
          debugPath.empty() ? nullptr : ElfFile::open(debugPath, error);
      if (!debug || !readTable(debug->get(), SHT_SYMTAB, symbols))
        readTable(file->get(), SHT_DYNSYM, symbols);
    }
  }
  return std::make_unique<ElfSymbolTable>(std::move(symbols));
}

ElfSymbolTable::ElfSymbolTable(std::vector<ElfSymbol> symbols) : symbols_(std::move(symbols)) {
  // Of aliases (same address and size) the first stays: a global name before a
  // local one, and the shorter (`__libc_start_main`, not `..._alias_1`).
  std::sort(symbols_.begin(), symbols_.end(), [](const ElfSymbol &a, const ElfSymbol &b) {
    if (a.address != b.address)
      return a.address < b.address;
    if (a.size != b.size)
      return a.size > b.size;
    if (a.global != b.global)
      return a.global;
    return a.name.size() != b.name.size() ? a.name.size() < b.name.size() : a.name < b.name;
  });
  symbols_.erase(std::unique(symbols_.begin(), symbols_.end(),
                             [](const ElfSymbol &a, const ElfSymbol &b) {
                               return a.address == b.address && a.size == b.size;
                             }),
                 symbols_.end());
}

const ElfSymbol *ElfSymbolTable::containing(uint64_t linkAddress) const {
  auto it = std::upper_bound(symbols_.begin(), symbols_.end(), linkAddress,
                             [](uint64_t a, const ElfSymbol &s) { return a < s.address; });
  // Symbols may nest (a function inside a larger object's range): look back
  // past the nearest start for one that still holds the address.
  for (int steps = 0; it != symbols_.begin() && steps < 8; ++steps) {
    const ElfSymbol &s = *--it;
    if (linkAddress == s.address || linkAddress - s.address < s.size)
      return &s;
  }
  return nullptr;
}

const ElfSymbol *ElfSymbolTable::named(std::string_view name) const {
  for (const ElfSymbol &s : symbols_)
    if (s.global && s.name == name)
      return &s;
  return nullptr;
}

} // namespace sonde::symbols
