#include "runtime/session/ProbedFiles.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace sonde::session {

namespace {

// A shared library: an ELF shared object without a program interpreter (a PIE
// program has one).
bool isLibrary(const std::string &path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  Elf64_Ehdr eh{};
  bool library = pread(fd, &eh, sizeof eh, 0) == sizeof eh && eh.e_type == ET_DYN &&
                 eh.e_phentsize == sizeof(Elf64_Phdr);
  for (unsigned i = 0; library && i < eh.e_phnum; ++i) {
    Elf64_Phdr ph{};
    if (pread(fd, &ph, sizeof ph, static_cast<off_t>(eh.e_phoff + i * sizeof ph)) != sizeof ph)
      break;
    if (ph.p_type == PT_INTERP)
      library = false;
  }
  close(fd);
  return library;
}

void add(ProbedFiles &out, const char *path) {
  if (!path)
    return;
  for (const ProbedFile &f : out.files)
    if (f.path == path)
      return;
  struct stat st;
  if (stat(path, &st) != 0)
    return;
  out.files.push_back({path, st.st_dev, st.st_ino, isLibrary(path)});
}

} // namespace

ProbedFiles probedFiles(const LoadedModule &module) {
  ProbedFiles out;
  const sonde_module_desc &d = module.desc();
  for (uint32_t i = 0; i < d.marker_site_count; ++i)
    add(out, d.marker_sites[i].binary);
  for (uint32_t i = 0; i < d.probe_count; ++i) {
    uint32_t kind = d.probes[i].kind;
    if (kind < SONDE_PROBE_PROCESS_BEGIN || kind > SONDE_PROBE_THREAD_END)
      continue;
    if (d.probes[i].process_path)
      add(out, d.probes[i].process_path);
    else
      out.anyProcess = true;
  }
  return out;
}

std::string fileIdText(dev_t dev, ino_t ino) {
  return std::to_string(static_cast<unsigned long long>(dev)) + ":" +
         std::to_string(static_cast<unsigned long long>(ino));
}

std::string encodeProbedFiles(const ProbedFiles &probed) {
  std::string text = probed.anyProcess ? "*" : "";
  for (const ProbedFile &f : probed.files)
    text += (text.empty() ? "" : ",") + fileIdText(f.dev, f.ino);
  return text;
}

std::vector<std::string> probedFilesNotSeen(const ProbedFiles &probed,
                                            const std::set<std::string> &seenIds) {
  std::vector<std::string> out;
  for (const ProbedFile &f : probed.files)
    if (!seenIds.contains(fileIdText(f.dev, f.ino)))
      out.push_back((f.library ? "no process loaded " : "no process ran ") + f.path);
  return out;
}

} // namespace sonde::session
