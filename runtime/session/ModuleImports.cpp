#include "runtime/session/ModuleImports.h"

#include "runtime/symbols/ElfFile.h"

#include <cstring>
#include <gelf.h>

namespace sonde::session {

bool moduleImports(const std::string &path, const char *symbol) {
  std::string error;
  std::unique_ptr<symbols::ElfFile> file = symbols::ElfFile::open(path, error);
  if (!file)
    return true;
  Elf *elf = file->get();
  Elf_Scn *scn = nullptr;
  bool tableFound = false;
  while ((scn = elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr sh;
    if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || sh.sh_entsize == 0)
      continue;
    Elf_Data *data = elf_getdata(scn, nullptr);
    if (!data)
      continue;
    tableFound = true;
    for (size_t i = 0, n = sh.sh_size / sh.sh_entsize; i < n; ++i) {
      GElf_Sym sym;
      if (!gelf_getsym(data, static_cast<int>(i), &sym) || sym.st_shndx != SHN_UNDEF)
        continue;
      const char *name = elf_strptr(elf, sh.sh_link, sym.st_name);
      if (name && std::strcmp(name, symbol) == 0)
        return true;
    }
  }
  return !tableFound;
}

} // namespace sonde::session
