// The objects (executable, shared libraries) mapped into a process, with their
// load biases: read from the dynamic loader in the process itself, or from the
// text a target sends along with its stack records (so `sonde` can symbolize a
// target's addresses, also after the target has gone).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sonde::symbols {

struct LoadedObject {
  std::string path;
  uint64_t bias = 0;           // runtime minus link-time address
  uint64_t start = 0, end = 0; // runtime extent of its PT_LOAD segments
};

// This process's objects (dl_iterate_phdr).
std::vector<LoadedObject> loadedObjectsOfThisProcess();
// Changes whenever this process loads or unloads an object.
uint64_t loadedObjectsGeneration();

// One line per object: "START END BIAS PATH" (hex numbers), and back; lines
// that do not parse are skipped.
std::string serializeObjects(const std::vector<LoadedObject> &objects);
std::vector<LoadedObject> parseObjects(std::string_view text);

// The object holding `address`, or null.
const LoadedObject *objectHolding(const std::vector<LoadedObject> &objects, uint64_t address);

} // namespace sonde::symbols
