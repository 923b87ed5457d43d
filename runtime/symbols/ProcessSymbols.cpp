#include "runtime/symbols/ProcessSymbols.h"

#include "runtime/symbols/ElfSymbolTable.h"

#include <map>
#include <memory>
#include <mutex>

namespace sonde::symbols {

namespace {

// Never destroyed: exit-time probes may still symbolize after static destructors.
std::mutex &lock() {
  static auto *m = new std::mutex;
  return *m;
}

// With lock() held.
const ElfSymbolTable &tableOf(const std::string &path) {
  static auto *tables = new std::map<std::string, std::unique_ptr<ElfSymbolTable>>;
  std::unique_ptr<ElfSymbolTable> &table = (*tables)[path];
  if (!table)
    table = ElfSymbolTable::load(path);
  return *table;
}

// With lock() held.
AddressSymbol symbolize(const LoadedObject *o, uint64_t address) {
  AddressSymbol s;
  s.address = address;
  if (!o)
    return s;
  s.module = o->path;
  s.moduleOffset = address - o->start;
  s.moduleSize = o->end - o->start;
  if (const ElfSymbol *sym = tableOf(o->path).containing(address - o->bias)) {
    s.name = sym->name;
    s.offset = address - o->bias - sym->address;
    s.size = sym->size;
  }
  return s;
}

} // namespace

AddressSymbol resolveInThisProcess(uint64_t address) {
  static auto *objects = new std::vector<LoadedObject>;
  std::lock_guard<std::mutex> g(lock());
  const LoadedObject *o = objectHolding(*objects, address);
  if (!o) {
    *objects = loadedObjectsOfThisProcess();
    o = objectHolding(*objects, address);
  }
  return symbolize(o, address);
}

AddressSymbol resolveIn(const std::vector<LoadedObject> &objects, uint64_t address) {
  std::lock_guard<std::mutex> g(lock());
  return symbolize(objectHolding(objects, address), address);
}

} // namespace sonde::symbols
