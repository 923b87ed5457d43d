#include "probes/tracepoint/SyscallDispatch.h"

#include "probes/tracepoint/SyscallTable.h"

#include <map>

namespace sonde::probes::tracepoint {

namespace {

constexpr uint32_t kIdOffset = 8, kArgsOffset = 16, kArgBytes = 8, kMaxArgs = 6;

// Whether `format`, a per-call event of `direction`, has the raw event's
// layout: `int __syscall_nr` where the raw id is, then an integer or pointer
// argument per 8-byte slot from offset 16 (enter) or `ret` at 16 (exit).
bool hasRawLayout(const TracepointFormat &format, SyscallDirection direction) {
  uint32_t next = kArgsOffset, count = 0;
  bool sawNumber = false;
  for (const TracepointField &f : format.fields) {
    if (f.common)
      continue;
    if (!sawNumber) {
      if (f.name != "__syscall_nr" || f.offset != kIdOffset || f.size != 4)
        return false;
      sawNumber = true;
      continue;
    }
    // The parser narrows `int fd; size:8` to the int the value is.
    bool scalar = f.kind == TracepointFieldKind::Integer || f.kind == TracepointFieldKind::Pointer;
    if (!scalar || f.offset != next || f.size > kArgBytes)
      return false;
    if (direction == SyscallDirection::Exit && f.name != "ret")
      return false;
    next += kArgBytes;
    ++count;
  }
  return sawNumber && (direction == SyscallDirection::Enter ? count <= kMaxArgs : count == 1);
}

} // namespace

std::vector<SyscallSlot> planSyscallDispatch(const std::vector<TracepointProgram> &programs) {
  // Per direction: call number -> the programs on its event.
  std::map<uint32_t, std::vector<uint32_t>> byNumber[2];
  for (const TracepointProgram &p : programs) {
    if (p.system != "syscalls" || p.rawArguments || !p.format)
      continue;
    SyscallDirection direction;
    std::string name;
    if (p.event.starts_with("sys_enter_")) {
      direction = SyscallDirection::Enter;
      name = p.event.substr(10);
    } else if (p.event.starts_with("sys_exit_")) {
      direction = SyscallDirection::Exit;
      name = p.event.substr(9);
    } else {
      continue;
    }
    std::optional<uint32_t> number = syscallNumber(name);
    if (!number || !hasRawLayout(*p.format, direction))
      continue;
    byNumber[static_cast<uint32_t>(direction)][*number].push_back(p.probeIndex);
  }
  std::vector<SyscallSlot> slots;
  for (uint32_t d = 0; d < 2; ++d) {
    std::vector<SyscallSlot> direction;
    for (const auto &[number, probes] : byNumber[d])
      if (probes.size() == 1)
        direction.push_back({probes.front(), static_cast<SyscallDirection>(d), number});
    if (direction.size() > kSyscallDispatchMinEvents)
      slots.insert(slots.end(), direction.begin(), direction.end());
  }
  return slots;
}

} // namespace sonde::probes::tracepoint
