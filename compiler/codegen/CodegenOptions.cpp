#include "codegen/CodegenOptions.h"

#include "runtime/values/GlobalLayout.h"

#include <cerrno>
#include <cstdlib>
#include <limits>

namespace sonde::codegen {

namespace {

constexpr int64_t kU32Max = std::numeric_limits<uint32_t>::max();
constexpr int64_t kI32Max = std::numeric_limits<int32_t>::max();

// A limit and the range of values that make sense for it. Strings live in
// fixed buffers on handler stacks, so MAXSTRINGLEN stays well below a stack.
struct LimitSpec {
  const char *name;
  int64_t min, max;
  uint32_t sonde_limits::*field; // null: not stored in sonde_limits
};

const LimitSpec kLimits[] = {
    {"MAXSTRINGLEN", 2, 65536, &sonde_limits::max_string_len},
    {"MAXMAPENTRIES", 1, int64_t{1} << 28, &sonde_limits::max_map_entries},
    {"MAXACTION", 1, kI32Max, &sonde_limits::max_action},
    {"MAXACTION_INTERRUPTIBLE", 1, kI32Max, &sonde_limits::max_action_interruptible},
    {"MAXTRYLOCK", 0, kU32Max, &sonde_limits::max_try_lock},
    {"TRYLOCKDELAY", 0, kU32Max, &sonde_limits::try_lock_delay_us},
    {"MAXERRORS", 0, kU32Max, &sonde_limits::max_errors},
    {"MAXSKIPPED", 0, kU32Max, &sonde_limits::max_skipped},
    {"MAXNESTING", 0, 100000, nullptr},
    {"HIST_ELISION", std::numeric_limits<int32_t>::min(), kI32Max, nullptr},
    {"MINSTACKSPACE", 0, std::numeric_limits<int64_t>::max(), nullptr},
    {"MAXBACKTRACE", 1, 4096, &sonde_limits::max_backtrace},
    {"STP_OVERLOAD_THRESHOLD", 0, std::numeric_limits<int64_t>::max(), nullptr},
    {"STP_OVERLOAD_INTERVAL", 0, std::numeric_limits<int64_t>::max(), nullptr},
    {"STP_NO_OVERLOAD", std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(),
     nullptr},
    {"STP_MAXMEMORY", 0, std::numeric_limits<int64_t>::max(), nullptr},
};

const LimitSpec *findLimit(const std::string &name) {
  for (const auto &l : kLimits)
    if (name == l.name)
      return &l;
  return nullptr;
}

// C integer syntax, as the value would have been in stap's -D macro.
std::optional<int64_t> parseNumber(const std::string &text) {
  if (text.empty())
    return std::nullopt;
  errno = 0;
  char *end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 0);
  if (errno != 0 || *end != '\0')
    return std::nullopt;
  return v;
}

} // namespace

CodegenOptions::CodegenOptions() : limits(values::defaultLimits()) {}

bool isKnownLimitName(const std::string &name) { return findLimit(name) != nullptr; }

std::optional<std::string>
applyLimitDefines(const std::vector<std::pair<std::string, std::string>> &defines,
                  CodegenOptions &opts) {
  bool interruptibleGiven = false;
  for (const auto &[name, text] : defines) {
    const LimitSpec *spec = findLimit(name);
    if (!spec)
      continue; // the driver warns about names it does not know
    std::optional<int64_t> v = parseNumber(text);
    if (!v || *v < spec->min || *v > spec->max)
      return "-D " + name + "=" + text + ": expected a number from " + std::to_string(spec->min) +
             " to " + std::to_string(spec->max);
    if (spec->field)
      opts.limits.*(spec->field) = static_cast<uint32_t>(*v);
    if (name == "MAXACTION_INTERRUPTIBLE")
      interruptibleGiven = true;
    else if (name == "MAXNESTING")
      opts.maxNesting = *v;
    else if (name == "HIST_ELISION")
      opts.limits.hist_elision = static_cast<int32_t>(*v);
  }
  // stap derives MAXACTION_INTERRUPTIBLE from MAXACTION unless it is set itself.
  if (!interruptibleGiven) {
    uint64_t derived = uint64_t{opts.limits.max_action} * 10;
    opts.limits.max_action_interruptible =
        static_cast<uint32_t>(derived > uint64_t(kI32Max) ? kI32Max : derived);
  }
  return std::nullopt;
}

} // namespace sonde::codegen
