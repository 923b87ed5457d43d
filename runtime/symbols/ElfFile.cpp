#include "runtime/symbols/ElfFile.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace sonde::symbols {

std::unique_ptr<ElfFile> ElfFile::open(const std::string &path, std::string &error) {
  auto fail = [&](const std::string &why) {
    error = path + ": " + why;
    return nullptr;
  };
  if (elf_version(EV_CURRENT) == EV_NONE)
    return fail(std::string("libelf is unusable: ") + elf_errmsg(-1));
  // O_NONBLOCK: a FIFO named by mistake must not hang pass 2; only regular files
  // are read.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return fail(std::strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return fail(S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file");
  }
  std::unique_ptr<ElfFile> file(new ElfFile(fd, elf_begin(fd, ELF_C_READ_MMAP, nullptr)));
  if (file->elf_ == nullptr)
    return fail(std::string("cannot read as ELF: ") + elf_errmsg(-1));
  if (elf_kind(file->elf_) != ELF_K_ELF)
    return fail("not an ELF file");
  return file;
}

ElfFile::~ElfFile() {
  if (elf_)
    elf_end(elf_);
  close(fd_);
}

} // namespace sonde::symbols
