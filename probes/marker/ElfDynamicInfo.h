// What the dynamic loader needs to know of one ELF object to find its libraries:
// its DT_NEEDED names, DT_RPATH and DT_RUNPATH, and its class and machine (ld.so
// skips libraries built for another).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sonde::probes::marker {

struct ElfDynamicInfo {
  int elfClass = 0;     // ELFCLASS32 or ELFCLASS64
  uint16_t machine = 0; // EM_X86_64, ...
  std::vector<std::string> needed;
  std::optional<std::string> rpath;   // DT_RPATH as written (':'-separated, "$ORIGIN" kept)
  std::optional<std::string> runpath; // DT_RUNPATH as written

  // Whether ld.so would load this object as a library of `other`.
  bool compatibleWith(const ElfDynamicInfo &other) const {
    return elfClass == other.elfClass && machine == other.machine;
  }

  // The dynamic section of the ELF file at `path` (an empty one for a static
  // executable). On failure returns nullopt and sets `error` to "PATH: why".
  static std::optional<ElfDynamicInfo> read(const std::string &path, std::string &error);
};

} // namespace sonde::probes::marker
