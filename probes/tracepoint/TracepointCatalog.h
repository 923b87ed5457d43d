// The kernel's tracepoints as tracefs lists them (events/SYSTEM/EVENT/format),
// and which of them a `kernel.trace("...")` argument names.
#pragma once

#include "probes/tracepoint/TracepointFormat.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace sonde::probes::tracepoint {

struct TracepointMatch {
  std::vector<std::string> names; // "system:event", sorted
  std::string error;              // non-empty: the argument is ambiguous or malformed
};

class TracepointCatalog {
public:
  // The catalog of the tracefs `events` directory `eventsDir`.
  explicit TracepointCatalog(std::string eventsDir) : eventsDir_(std::move(eventsDir)) {}

  // The running kernel's catalog: tracefs at $SONDE_TRACEFS (tests), else
  // /sys/kernel/tracing, else /sys/kernel/debug/tracing, mounting tracefs at
  // /sys/kernel/tracing if neither is there. Null with a one-line reason.
  static std::optional<TracepointCatalog> open(std::string *error);

  // The kernel's tracefs `events` directory: /sys/kernel/tracing, else
  // /sys/kernel/debug/tracing, mounting tracefs at /sys/kernel/tracing if
  // neither is there (libbpf attaches through one of them). Null with a reason.
  static std::optional<std::string> kernelEventsDir(std::string *error);

  // Every "system:event", sorted (read once).
  const std::vector<std::string> &names();

  // The tracepoints `pattern` names: "system:event" or a bare "event" (which
  // must then name one tracepoint), each part an fnmatch glob. No match gives
  // an empty list and no error (the caller suggests similar names).
  TracepointMatch find(const std::string &pattern);

  // The record layout of "system:event" (read once); null with a reason.
  const TracepointFormat *format(const std::string &name, std::string *error);

private:
  std::string eventsDir_;
  std::optional<std::vector<std::string>> names_;
  std::map<std::string, TracepointFormat> formats_;
};

} // namespace sonde::probes::tracepoint
