// The SIGTRAP handler behind 1-byte (sys/sdt.h) sites and behind the int3 a
// 5-byte site carries while it is being patched. Each such event costs a trap
// (about a microsecond), against a few nanoseconds through a stub.
#pragma once

#include <string>

namespace sonde::agent {

// Installs the handler (SA_SIGINFO), keeping the previous one for traps that
// are not at our sites. Idempotent.
bool installTrapHandler(std::string *error);

} // namespace sonde::agent
