#include "probes/marker/ElfDynamicInfo.h"

#include "runtime/symbols/ElfFile.h"

#include <gelf.h>
#include <memory>

namespace sonde::probes::marker {

using symbols::ElfFile;

std::optional<ElfDynamicInfo> ElfDynamicInfo::read(const std::string &path, std::string &error) {
  std::unique_ptr<ElfFile> file = ElfFile::open(path, error);
  if (!file)
    return std::nullopt;
  Elf *elf = file->get();
  GElf_Ehdr ehdr;
  if (gelf_getehdr(elf, &ehdr) == nullptr) {
    error = path + ": malformed ELF header: " + elf_errmsg(-1);
    return std::nullopt;
  }
  ElfDynamicInfo info;
  info.elfClass = gelf_getclass(elf);
  info.machine = ehdr.e_machine;
  Elf_Scn *scn = nullptr;
  while ((scn = elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_type != SHT_DYNAMIC)
      continue;
    Elf_Data *data = elf_getdata(scn, nullptr);
    if (data == nullptr || shdr.sh_entsize == 0)
      continue;
    size_t count = shdr.sh_size / shdr.sh_entsize;
    for (size_t i = 0; i < count; ++i) {
      GElf_Dyn dyn;
      if (gelf_getdyn(data, static_cast<int>(i), &dyn) == nullptr || dyn.d_tag == DT_NULL)
        break;
      if (dyn.d_tag != DT_NEEDED && dyn.d_tag != DT_RPATH && dyn.d_tag != DT_RUNPATH)
        continue;
      const char *text = elf_strptr(elf, shdr.sh_link, dyn.d_un.d_val);
      if (text == nullptr)
        continue;
      if (dyn.d_tag == DT_NEEDED)
        info.needed.emplace_back(text);
      else if (dyn.d_tag == DT_RPATH)
        info.rpath = text;
      else
        info.runpath = text;
    }
  }
  return info;
}

} // namespace sonde::probes::marker
