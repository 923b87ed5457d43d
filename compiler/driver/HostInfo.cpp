#include "driver/HostInfo.h"

#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <sys/utsname.h>
#include <zlib.h>

namespace sonde {

std::string hostKernelRelease() {
  struct utsname u {};
  if (uname(&u) != 0)
    return {};
  return u.release;
}

std::string hostKernelVersion() {
  std::string release = hostKernelRelease();
  size_t end = 0;
  while (end < release.size() && (isdigit(static_cast<unsigned char>(release[end])) ||
                                  release[end] == '.'))
    ++end;
  std::string v = release.substr(0, end);
  while (!v.empty() && v.back() == '.')
    v.pop_back();
  return v;
}

namespace {

std::string readConfigText() {
  if (gzFile gz = gzopen("/proc/config.gz", "rb")) {
    std::string text;
    char buf[65536];
    int n;
    while ((n = gzread(gz, buf, sizeof buf)) > 0)
      text.append(buf, static_cast<size_t>(n));
    gzclose(gz);
    if (!text.empty())
      return text;
  }
  std::ifstream in("/boot/config-" + hostKernelRelease());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const std::map<std::string, std::string> &kernelConfig() {
  static std::map<std::string, std::string> config;
  static std::once_flag once;
  std::call_once(once, [] {
    std::istringstream in(readConfigText());
    std::string line;
    while (std::getline(in, line)) {
      auto eq = line.find('=');
      if (line.rfind("CONFIG_", 0) != 0 || eq == std::string::npos)
        continue;
      std::string value = line.substr(eq + 1);
      if (value.size() >= 2 && value.front() == '"' && value.back() == '"')
        value = value.substr(1, value.size() - 2);
      config[line.substr(0, eq)] = value;
    }
  });
  return config;
}

} // namespace

std::string hostKernelConfig(const std::string &name) {
  const auto &config = kernelConfig();
  auto it = config.find(name);
  return it == config.end() ? std::string() : it->second;
}

} // namespace sonde
