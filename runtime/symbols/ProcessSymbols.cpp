#include "runtime/symbols/ProcessSymbols.h"

#include "runtime/symbols/ElfSymbolTable.h"

#include <algorithm>
#include <climits>
#include <link.h>
#include <map>
#include <memory>
#include <mutex>
#include <unistd.h>
#include <vector>

namespace sonde::symbols {

namespace {

struct LoadedObject {
  std::string path;
  uint64_t bias = 0;           // runtime minus link-time address
  uint64_t start = 0, end = 0; // runtime extent of its PT_LOAD segments
};

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

class Resolver {
public:
  AddressSymbol resolve(uint64_t address) {
    std::lock_guard<std::mutex> g(lock_);
    const LoadedObject *o = find(address);
    if (!o) {
      reload();
      o = find(address);
    }
    AddressSymbol s;
    s.address = address;
    if (!o)
      return s;
    s.module = o->path;
    s.moduleOffset = address - o->start;
    s.moduleSize = o->end - o->start;
    std::unique_ptr<ElfSymbolTable> &table = tables_[o->path];
    if (!table)
      table = ElfSymbolTable::load(o->path);
    if (const ElfSymbol *sym = table->containing(address - o->bias)) {
      s.name = sym->name;
      s.offset = address - o->bias - sym->address;
      s.size = sym->size;
    }
    return s;
  }

private:
  const LoadedObject *find(uint64_t address) const {
    for (const LoadedObject &o : objects_)
      if (address >= o.start && address < o.end)
        return &o;
    return nullptr;
  }
  void reload() {
    objects_.clear();
    dl_iterate_phdr(collectObject, &objects_);
  }

  std::mutex lock_;
  std::vector<LoadedObject> objects_;
  std::map<std::string, std::unique_ptr<ElfSymbolTable>> tables_;
};

} // namespace

AddressSymbol resolveInThisProcess(uint64_t address) {
  // Never destroyed: exit-time probes may still symbolize after static destructors.
  static Resolver *resolver = new Resolver;
  return resolver->resolve(address);
}

} // namespace sonde::symbols
