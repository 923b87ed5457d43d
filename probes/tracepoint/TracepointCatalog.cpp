#include "probes/tracepoint/TracepointCatalog.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fnmatch.h>
#include <fstream>
#include <sstream>
#include <sys/mount.h>

namespace sonde::probes::tracepoint {

namespace fs = std::filesystem;

std::optional<std::string> TracepointCatalog::kernelEventsDir(std::string *error) {
  std::error_code ec;
  bool denied = false;
  for (const char *dir : {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"}) {
    if (fs::exists(std::string(dir) + "/events", ec))
      return std::string(dir) + "/events";
    denied = denied || ec == std::errc::permission_denied;
  }
  if (!denied && mount("nodev", "/sys/kernel/tracing", "tracefs", 0, nullptr) == 0)
    return std::string("/sys/kernel/tracing/events");
  if (denied || errno == EPERM || errno == EACCES)
    *error = "cannot read tracepoints: permission denied on /sys/kernel/tracing (kernel probes "
             "need root: CAP_BPF, CAP_PERFMON and read access to tracefs)";
  else
    *error = std::string("cannot read tracepoints: tracefs is not mounted at "
                         "/sys/kernel/tracing and mounting it failed: ") +
             std::strerror(errno);
  return std::nullopt;
}

std::optional<TracepointCatalog> TracepointCatalog::open(std::string *error) {
  if (const char *dir = std::getenv("SONDE_TRACEFS"); dir && *dir)
    return TracepointCatalog(std::string(dir) + "/events");
  std::optional<std::string> events = kernelEventsDir(error);
  if (!events)
    return std::nullopt;
  return TracepointCatalog(*events);
}

const std::vector<std::string> &TracepointCatalog::names() {
  if (names_)
    return *names_;
  names_.emplace();
  std::error_code ec;
  for (const auto &system : fs::directory_iterator(eventsDir_, ec)) {
    if (!system.is_directory(ec))
      continue;
    for (const auto &event : fs::directory_iterator(system.path(), ec))
      if (fs::exists(event.path() / "format", ec))
        names_->push_back(system.path().filename().string() + ":" +
                          event.path().filename().string());
  }
  std::sort(names_->begin(), names_->end());
  return *names_;
}

TracepointMatch TracepointCatalog::find(const std::string &pattern) {
  TracepointMatch match;
  size_t colon = pattern.find(':');
  if (pattern.empty() ||
      (colon != std::string::npos && (colon == 0 || colon + 1 == pattern.size() ||
                                      pattern.find(':', colon + 1) != std::string::npos))) {
    match.error = "expected \"system:event\" or \"event\", got \"" + pattern + "\"";
    return match;
  }
  std::string system = colon == std::string::npos ? "*" : pattern.substr(0, colon);
  std::string event = colon == std::string::npos ? pattern : pattern.substr(colon + 1);
  for (const std::string &name : names()) {
    size_t at = name.find(':');
    if (fnmatch(system.c_str(), name.substr(0, at).c_str(), 0) == 0 &&
        fnmatch(event.c_str(), name.substr(at + 1).c_str(), 0) == 0)
      match.names.push_back(name);
  }
  // A bare event name without a glob means one tracepoint.
  bool glob = event.find_first_of("*?[") != std::string::npos;
  if (colon == std::string::npos && !glob && match.names.size() > 1) {
    std::string all;
    for (const std::string &n : match.names)
      all += (all.empty() ? "" : ", ") + n;
    match.error = "tracepoint \"" + pattern + "\" is ambiguous: " + all;
    match.names.clear();
  }
  return match;
}

const TracepointFormat *TracepointCatalog::format(const std::string &name, std::string *error) {
  if (auto it = formats_.find(name); it != formats_.end())
    return &it->second;
  size_t colon = name.find(':');
  fs::path path = fs::path(eventsDir_) / name.substr(0, colon) / name.substr(colon + 1) / "format";
  std::ifstream in(path);
  if (!in) {
    *error = "cannot read " + path.string() + ": " + std::strerror(errno);
    return nullptr;
  }
  std::stringstream text;
  text << in.rdbuf();
  std::string why;
  auto parsed = parseTracepointFormat(text.str(), &why);
  if (!parsed) {
    *error = path.string() + ": " + why;
    return nullptr;
  }
  return &formats_.emplace(name, std::move(*parsed)).first->second;
}

} // namespace sonde::probes::tracepoint
