#include "probes/marker/ElfSymbols.h"

#include "runtime/symbols/ElfFile.h"

#include <gelf.h>
#include <memory>

namespace sonde::probes::marker {

using symbols::ElfFile;
namespace {

// Adds to `found` the wanted symbols defined in the symbol table `scn`; the first
// definition of a name wins, as the linker's would for a global.
void collect(Elf *elf, Elf_Scn *scn, const GElf_Shdr &shdr, const std::set<std::string> &names,
             std::map<std::string, uint64_t> &found) {
  Elf_Data *data = elf_getdata(scn, nullptr);
  if (data == nullptr || shdr.sh_entsize == 0)
    return;
  size_t count = shdr.sh_size / shdr.sh_entsize;
  for (size_t i = 0; i < count; ++i) {
    GElf_Sym sym;
    if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr)
      continue;
    if (sym.st_shndx == SHN_UNDEF || GELF_ST_TYPE(sym.st_info) == STT_TLS)
      continue;
    const char *name = elf_strptr(elf, shdr.sh_link, sym.st_name);
    if (name == nullptr || *name == '\0' || !names.contains(name))
      continue;
    found.try_emplace(name, sym.st_value);
  }
}

} // namespace

std::optional<std::map<std::string, uint64_t>>
ElfSymbols::addresses(const std::string &path, const std::set<std::string> &names,
                      std::string &error) {
  std::map<std::string, uint64_t> found;
  if (names.empty())
    return found;
  std::unique_ptr<ElfFile> file = ElfFile::open(path, error);
  if (!file)
    return std::nullopt;
  // .symtab first: it has the static (file-local) variables .dynsym lacks.
  for (Elf64_Word type : {SHT_SYMTAB, SHT_DYNSYM}) {
    Elf_Scn *scn = nullptr;
    while ((scn = elf_nextscn(file->get(), scn)) != nullptr) {
      GElf_Shdr shdr;
      if (gelf_getshdr(scn, &shdr) != nullptr && shdr.sh_type == type)
        collect(file->get(), scn, shdr, names, found);
    }
    if (found.size() == names.size())
      break;
  }
  return found;
}

} // namespace sonde::probes::marker
