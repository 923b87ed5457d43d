// Reads the SDT markers of one ELF file (executable or shared object) from its
// `.note.stapsdt` notes, in the format sys/sdt.h and sonde/sdt.h both emit.
#pragma once

#include "probes/marker/ArgSpec.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sonde::probes::marker {

// The NOP found at a marker's address in the file's text.
enum class SiteNop : uint8_t {
  None = 0,     // not a NOP we know: the site cannot be patched
  OneByte = 1,  // sys/sdt.h's `90`: reached through a trap
  FiveByte = 5, // sonde/sdt.h's `0f 1f 44 00 00`: patched into a call
};

struct MarkerSite {
  std::string provider;
  std::string name;
  // Link-time addresses, already adjusted by actualBase - recordedBase when the file
  // was prelinked after the notes were written (as sys/sdt.h consumers do).
  uint64_t pc = 0;
  uint64_t semaphore = 0;             // 0: no semaphore
  uint64_t recordedBase = 0;          // `.stapsdt.base` as the note records it
  std::optional<uint64_t> actualBase; // its address in the file; none without the section
  std::string rawArgs;
  std::vector<ArgSpec> args;
  std::string argError; // why rawArgs did not parse (then args is empty)
  SiteNop nop = SiteNop::None;
};

class SdtNoteReader {
public:
  // All markers of the ELF file at `path`, in note order; an ELF without notes gives
  // an empty list. On failure returns nullopt and sets `error` to a message naming
  // the file.
  static std::optional<std::vector<MarkerSite>> read(const std::string &path, std::string &error);
};

} // namespace sonde::probes::marker
