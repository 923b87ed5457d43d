// An ELF file opened read-only through libelf (symbol tables here, SDT notes
// and symbols in probes/marker).
#pragma once

#include <libelf.h>

#include <memory>
#include <string>

namespace sonde::symbols {

class ElfFile {
public:
  // The ELF file at `path`, or null with `error` set to "PATH: why" (missing, not
  // ELF, malformed).
  static std::unique_ptr<ElfFile> open(const std::string &path, std::string &error);

  ElfFile(const ElfFile &) = delete;
  ElfFile &operator=(const ElfFile &) = delete;
  ~ElfFile();

  Elf *get() const { return elf_; }

private:
  ElfFile(int fd, Elf *elf) : fd_(fd), elf_(elf) {}

  int fd_;
  Elf *elf_;
};

} // namespace sonde::symbols
