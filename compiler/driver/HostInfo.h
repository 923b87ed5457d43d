// Facts about the running kernel that %( %) conditions compare against.
#pragma once

#include <string>

namespace sonde {

std::string hostKernelRelease(); // `uname -r`, e.g. "6.18.0-1-amd64"
std::string hostKernelVersion(); // its leading version, e.g. "6.18.0"
// Value of CONFIG_NAME from /proc/config.gz or /boot/config-RELEASE ("" if unset).
std::string hostKernelConfig(const std::string &name);

} // namespace sonde
