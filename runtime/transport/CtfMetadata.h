// The TSDL text of a CTF 1.8 trace's `metadata` file: the packet and event
// layouts CtfStream writes, the clock, and one event class per record format.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sonde::transport {

enum class CtfFieldKind : uint8_t { Signed64, String };

struct CtfField {
  std::string name; // a C identifier
  CtfFieldKind kind;
};

struct CtfEventClass {
  uint32_t id;
  std::string name; // any text (escaped in the metadata)
  std::vector<CtfField> fields;
};

// Timestamps count cycles of `frequency` Hz; cycle 0 is offsetSeconds +
// offsetCycles / frequency after the Unix epoch.
struct CtfClock {
  std::string name; // a C identifier
  uint64_t frequency = 1000000000;
  int64_t offsetSeconds = 0;
  uint64_t offsetCycles = 0;
};

using CtfUuid = std::array<uint8_t, 16>;

struct CtfTraceDescription {
  CtfUuid uuid;
  std::string traceName;
  CtfClock clock;
  std::vector<CtfEventClass> events;
};

// True for [A-Za-z_][A-Za-z0-9_]*, what TSDL accepts as a field or clock name.
bool isCtfIdentifier(std::string_view name);

std::string ctfMetadataText(const CtfTraceDescription &trace);

} // namespace sonde::transport
