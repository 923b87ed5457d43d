// A tracepoint's record layout, as its tracefs `events/SYSTEM/EVENT/format` file
// declares it: each field's C type, offset, size and signedness, classified by
// how a probe reads it (`$field`).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sonde::probes::tracepoint {

enum class TracepointFieldKind {
  Integer,       // 1, 2, 4 or 8 bytes
  Pointer,       // `T *`: an address (8 bytes)
  CharArray,     // `char name[N]`: a string of at most N bytes in the record
  DynamicString, // `__data_loc char[] name`: offset (low 16 bits) and length (high 16) of a string
  Array,         // `T name[N]` of anything but char, or a `__data_loc` array of it
  Other,         // any other size: not readable as a `$field`
};

struct TracepointField {
  std::string name;
  std::string type; // the C type as declared: "pid_t", "const char *", "char[16]"
  TracepointFieldKind kind = TracepointFieldKind::Other;
  uint32_t offset = 0, size = 0; // bytes in the record
  bool isSigned = false;
  uint32_t count = 0;  // Array, CharArray: elements (0: dynamic)
  bool common = false; // a common_* field every event starts with
};

struct TracepointFormat {
  std::string name;
  uint32_t id = 0;
  std::vector<TracepointField> fields; // in the file's order
};

// A tracepoint pass 2 resolved a `kernel.trace(...)` point to.
struct ResolvedTracepoint {
  std::string system, event;
  TracepointFormat format;
};

// The field `$name` reads (name without the '$'), or null. `return` names the
// `ret` field of an event that has one and no `return` (the syscall exits), as
// `$return` does in stap's syscall.*.return probes.
const TracepointField *findTracepointField(const TracepointFormat &format, std::string_view name);

// Parses the text of a `format` file. On failure returns nullopt and sets
// `error` to "line N: why".
std::optional<TracepointFormat> parseTracepointFormat(std::string_view text, std::string *error);

} // namespace sonde::probes::tracepoint
