#include "runtime/session/TargetLibc.h"

#include "runtime/session/ResumeFrame.h"
#include "runtime/symbols/ElfSymbolTable.h"

#include <cerrno>
#include <cstring>
#include <elf.h>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace sonde::session {

namespace {

struct Mapping {
  uint64_t start = 0, end = 0, offset = 0;
  std::string perms, range, path;
};

std::vector<Mapping> readMaps(pid_t pid) {
  std::vector<Mapping> out;
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  std::string line;
  while (std::getline(maps, line)) {
    std::istringstream in(line);
    Mapping m;
    std::string offset, dev, inode;
    in >> m.range >> m.perms >> offset >> dev >> inode;
    std::getline(in >> std::ws, m.path);
    m.start = std::strtoull(m.range.c_str(), nullptr, 16);
    m.end = std::strtoull(m.range.c_str() + m.range.find('-') + 1, nullptr, 16);
    m.offset = std::strtoull(offset.c_str(), nullptr, 16);
    out.push_back(std::move(m));
  }
  return out;
}

std::string baseName(const std::string &path) { return path.substr(path.rfind('/') + 1); }

bool isLibc(const std::string &path) {
  std::string base = baseName(path);
  return base.rfind("libc.so", 0) == 0 ||
         (base.rfind("libc-", 0) == 0 && base.find(".so") != std::string::npos);
}

bool isLoader(const std::string &path) {
  std::string base = baseName(path);
  return base.rfind("ld-", 0) == 0 && base.find(".so") != std::string::npos;
}

struct ElfFile {
  int fd = -1;
  Elf64_Ehdr header{};
  std::vector<Elf64_Phdr> segments;
  ~ElfFile() {
    if (fd >= 0)
      close(fd);
  }
};

bool openElf(const std::string &file, ElfFile *elf, std::string *error) {
  elf->fd = open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (elf->fd < 0) {
    *error = file + ": " + std::strerror(errno);
    return false;
  }
  Elf64_Ehdr &eh = elf->header;
  if (pread(elf->fd, &eh, sizeof eh, 0) != sizeof eh || eh.e_phentsize != sizeof(Elf64_Phdr)) {
    *error = file + ": not a 64-bit ELF file";
    return false;
  }
  elf->segments.resize(eh.e_phnum);
  ssize_t want = static_cast<ssize_t>(eh.e_phnum * sizeof(Elf64_Phdr));
  if (pread(elf->fd, elf->segments.data(), static_cast<size_t>(want),
            static_cast<off_t>(eh.e_phoff)) != want) {
    *error = file + ": cannot read its program headers";
    return false;
  }
  return true;
}

// Runtime minus link-time addresses, from the mapping of file offset 0.
std::optional<uint64_t> loadBias(const ElfFile &elf, uint64_t mapStart) {
  for (const Elf64_Phdr &ph : elf.segments)
    if (ph.p_type == PT_LOAD && ph.p_offset == 0)
      return mapStart - (ph.p_vaddr & ~uint64_t{0xfff});
  return std::nullopt;
}

// The link-time address of glibc's __restore_rt: not exported, so found by its
// code in the executable segments.
std::optional<uint64_t> findRestoreRt(const ElfFile &elf) {
  for (const Elf64_Phdr &ph : elf.segments) {
    if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
      continue;
    std::string code(ph.p_filesz, '\0');
    if (pread(elf.fd, code.data(), code.size(), static_cast<off_t>(ph.p_offset)) !=
        static_cast<ssize_t>(code.size()))
      return std::nullopt;
    if (size_t at = code.find(kRestoreRtCode); at != std::string::npos)
      return ph.p_vaddr + at;
  }
  return std::nullopt;
}

} // namespace

std::optional<TargetLibc> inspectTargetLibc(pid_t pid, std::string *error) {
  std::vector<Mapping> maps = readMaps(pid);
  if (maps.empty()) {
    *error = "cannot read /proc/" + std::to_string(pid) + "/maps: " + std::strerror(errno);
    return std::nullopt;
  }
  TargetLibc libc;
  const Mapping *libcMap = nullptr;
  for (const Mapping &m : maps) {
    if (isLoader(m.path) && m.perms.find('x') != std::string::npos)
      libc.unsafe.push_back({m.start, m.end, "the dynamic loader"});
    if (!libcMap && isLibc(m.path) && m.offset == 0)
      libcMap = &m;
  }
  if (!libcMap) {
    *error = "it has no C library mapped (statically linked?), so it cannot load the agent";
    return std::nullopt;
  }
  // map_files reaches the mapped file even if it was replaced or lives in
  // another mount namespace; it needs root, so the path is the fallback.
  std::string proc = "/proc/" + std::to_string(pid);
  libc.file = proc + "/map_files/" + libcMap->range;
  if (access(libc.file.c_str(), R_OK) != 0)
    libc.file = proc + "/root" + libcMap->path;
  ElfFile elf;
  if (!openElf(libc.file, &elf, error))
    return std::nullopt;
  std::optional<uint64_t> bias = loadBias(elf, libcMap->start);
  std::optional<uint64_t> restoreRt = findRestoreRt(elf);
  if (!bias || !restoreRt) {
    *error = libcMap->path + ": " +
             (bias ? "no rt_sigreturn trampoline (__restore_rt) in it"
                   : "no loadable segment at offset 0");
    return std::nullopt;
  }
  libc.bias = *bias;
  libc.restoreRt = *restoreRt + *bias;
  std::unique_ptr<symbols::ElfSymbolTable> symbols = symbols::ElfSymbolTable::load(libc.file);
  struct Wanted {
    const char *name;
    uint64_t *at;
  };
  for (Wanted w : {Wanted{"dlopen", &libc.dlopen}, Wanted{"dlsym", &libc.dlsym},
                   Wanted{"dlerror", &libc.dlerror}, Wanted{"mmap", &libc.mmap},
                   Wanted{"munmap", &libc.munmap}}) {
    const symbols::ElfSymbol *s = symbols->named(w.name);
    if (!s) {
      *error = std::string("its C library has no ") + w.name +
               " (glibc before 2.34?), so it cannot load the agent";
      return std::nullopt;
    }
    *w.at = s->address + libc.bias;
  }
  for (const std::string &name : lockTakingLibcFunctions())
    if (const symbols::ElfSymbol *s = symbols->named(name))
      libc.unsafe.push_back({s->address + libc.bias,
                             s->address + libc.bias + std::max<uint64_t>(s->size, 1), name + "()",
                             returnsOnce(name)});
  return libc;
}

std::optional<TargetMapping> mappingAt(pid_t pid, uint64_t address) {
  for (const Mapping &m : readMaps(pid))
    if (address >= m.start && address < m.end)
      return TargetMapping{m.start, m.end, m.path};
  return std::nullopt;
}

} // namespace sonde::session
