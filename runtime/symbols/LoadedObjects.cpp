#include "runtime/symbols/LoadedObjects.h"

#include <algorithm>
#include <cinttypes>
#include <climits>
#include <cstddef>
#include <cstdio>
#include <link.h>
#include <unistd.h>

namespace sonde::symbols {

namespace {

std::string executablePath() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

int collectObject(dl_phdr_info *info, size_t, void *out) {
  LoadedObject o;
  o.path = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : executablePath();
  o.bias = info->dlpi_addr;
  o.start = UINT64_MAX;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr) &ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD)
      continue;
    o.start = std::min<uint64_t>(o.start, o.bias + ph.p_vaddr);
    o.end = std::max<uint64_t>(o.end, o.bias + ph.p_vaddr + ph.p_memsz);
  }
  if (o.start < o.end && !o.path.empty())
    static_cast<std::vector<LoadedObject> *>(out)->push_back(std::move(o));
  return 0;
}

int readGeneration(dl_phdr_info *info, size_t size, void *out) {
  // dlpi_adds/dlpi_subs are there when the loader's struct is that large.
  if (size >= offsetof(dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs)
    *static_cast<uint64_t *>(out) = info->dlpi_adds + (info->dlpi_subs << 32);
  return 1; // the counters are global: the first object tells
}

} // namespace

std::vector<LoadedObject> loadedObjectsOfThisProcess() {
  std::vector<LoadedObject> objects;
  dl_iterate_phdr(collectObject, &objects);
  return objects;
}

uint64_t loadedObjectsGeneration() {
  uint64_t generation = 0;
  dl_iterate_phdr(readGeneration, &generation);
  return generation;
}

std::string serializeObjects(const std::vector<LoadedObject> &objects) {
  std::string text;
  char numbers[64];
  for (const LoadedObject &o : objects) {
    std::snprintf(numbers, sizeof numbers, "%" PRIx64 " %" PRIx64 " %" PRIx64 " ", o.start, o.end,
                  o.bias);
    text += numbers + o.path + "\n";
  }
  return text;
}

std::vector<LoadedObject> parseObjects(std::string_view text) {
  std::vector<LoadedObject> objects;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string line(text.substr(0, nl));
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    LoadedObject o;
    int pathAt = 0;
    if (std::sscanf(line.c_str(), "%" SCNx64 " %" SCNx64 " %" SCNx64 " %n", &o.start, &o.end,
                    &o.bias, &pathAt) == 3 &&
        pathAt > 0 && static_cast<size_t>(pathAt) < line.size() && o.start < o.end) {
      o.path = line.substr(static_cast<size_t>(pathAt));
      objects.push_back(std::move(o));
    }
  }
  return objects;
}

const LoadedObject *objectHolding(const std::vector<LoadedObject> &objects, uint64_t address) {
  for (const LoadedObject &o : objects)
    if (address >= o.start && address < o.end)
      return &o;
  return nullptr;
}

} // namespace sonde::symbols
