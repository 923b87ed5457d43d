// Addresses of this process resolved to the mapped object and symbol holding
// them. The objects come from the dynamic loader's list (dl_iterate_phdr), so
// load biases are exact for PIE executables and shared libraries; an address
// in none of them re-reads the list once (a library dlopen()ed since). Symbol
// tables load on first use and stay; lookups take a lock, since handlers on
// several threads may symbolize at once.
#pragma once

#include "runtime/symbols/AddressSymbol.h"

namespace sonde::symbols {

// The object and symbol holding `address` in this process (fields empty when
// unknown).
AddressSymbol resolveInThisProcess(uint64_t address);

} // namespace sonde::symbols
