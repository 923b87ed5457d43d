// The x86-64 system call numbers by name (the build machine's
// <asm/unistd_64.h>, and the calls added since): what ties a
// `syscalls:sys_enter_NAME` event to the id `raw_syscalls:sys_enter` reports.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace sonde::probes::tracepoint {

// The number of the system call whose trace events are named `name` ("close",
// "openat", "newfstat" for fstat), or nothing for a name the tables do not know.
std::optional<uint32_t> syscallNumber(std::string_view name);

} // namespace sonde::probes::tracepoint
