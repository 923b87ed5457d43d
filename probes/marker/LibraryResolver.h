// Which shared libraries a program loads at start, found the way ld.so finds them, so
// that `process("./app").mark(...)` also covers the application's own libraries.
#pragma once

#include "probes/marker/ElfDynamicInfo.h"

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace sonde::probes::marker {

// One object of a program's initial link map.
struct LinkedObject {
  std::string path;             // canonical (realpath)
  std::string openedAs;         // the path ld.so opens it by: its `$ORIGIN` is this directory
  std::string neededAs;         // the DT_NEEDED name it was loaded for; "" for the program
  std::optional<size_t> loader; // index of the object whose DT_NEEDED loaded it
  ElfDynamicInfo info;
};

class LibraryResolver {
public:
  // Reads an object's dynamic section; nullopt when the path is not a readable ELF
  // file (a candidate ld.so would pass over). Lets the caller cache the reads.
  using InfoReader = std::function<std::optional<ElfDynamicInfo>(const std::string &path)>;

  explicit LibraryResolver(InfoReader reader) : reader_(std::move(reader)) {}

  // The program at `program` (canonical path, already read as `info`) followed by
  // every library it needs, recursively, breadth-first as ld.so loads them. A needed
  // library found nowhere is left out, as are its own dependencies.
  std::vector<LinkedObject> linkMap(const std::string &program, const ElfDynamicInfo &info) const;

  // Whether a library's canonical path lies in a system library directory (/lib,
  // /usr/lib, /lib64, /usr/lib64 or a multiarch subdirectory such as
  // /usr/lib/x86_64-linux-gnu).
  static bool isSystemLibrary(const std::string &path);

private:
  // Where ld.so finds `name` for `objects[index]`: DT_RPATH of it and its loaders (if
  // it has no DT_RUNPATH), LD_LIBRARY_PATH, its DT_RUNPATH, /etc/ld.so.conf, the
  // default directories. Returns the path opened, or nullopt.
  std::optional<std::pair<std::string, ElfDynamicInfo>>
  find(const std::vector<LinkedObject> &objects, size_t index, const std::string &name) const;

  InfoReader reader_;
};

} // namespace sonde::probes::marker
