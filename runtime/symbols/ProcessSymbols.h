// Addresses resolved to the mapped object and symbol holding them: in this
// process (the objects from the dynamic loader, so load biases are exact for
// PIE executables and shared libraries; an address in none of them re-reads
// the list once, for a library dlopen()ed since), or in a target described by
// its object list. Symbol tables load on first use and stay; lookups take a
// lock, since handlers on several threads may symbolize at once.
#pragma once

#include "runtime/symbols/AddressSymbol.h"
#include "runtime/symbols/LoadedObjects.h"

#include <vector>

namespace sonde::symbols {

// The object and symbol holding `address` in this process (fields empty when
// unknown).
AddressSymbol resolveInThisProcess(uint64_t address);

// The same in a process whose objects are `objects`.
AddressSymbol resolveIn(const std::vector<LoadedObject> &objects, uint64_t address);

} // namespace sonde::symbols
