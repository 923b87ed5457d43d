// Where each script global lives in the segment. The compiler builds a GlobalLayout
// from the script's globals, bakes the offsets into generated code and embeds the
// serialized layout in the module; the runtime reads it back to create the segment
// and to print globals at exit. Descriptors are plain data; serialize() gives a
// self-contained byte string (little-endian, versioned).
#pragma once

#include "runtime/values/ValueAbi.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace sonde::values {

// The longest global name a layout carries (the compiler refuses longer ones
// in pass 2, naming the declaration).
inline constexpr uint32_t kMaxGlobalNameLength = 4096;

enum class ValueKind : uint8_t { Long = 0, String = 1, Stats = 2 };
enum class KeyKind : uint8_t { Long = 0, String = 1 };
enum class HistKind : uint8_t { None = 0, Log = 1, Linear = 2 };

struct GlobalDesc {
  std::string name;
  ValueKind value = ValueKind::Long;
  uint8_t keyCount = 0; // 0: scalar; 1..9: array with keys[0..keyCount)
  std::array<KeyKind, 9> keys{};
  uint32_t maxEntries = 0; // `global a[N]`; 0: MAXMAPENTRIES
  bool wrap = false;       // `global a%[N]`
  // Stats only.
  HistKind hist = HistKind::None;
  int64_t histLow = 0, histHigh = 0, histWidth = 0; // @hist_linear(L, H, W)
  uint32_t varianceShift = 0;                       // @variance(x, N)
  bool usesVariance = false; // @variance is read somewhere: keep Welford state

  bool operator==(const GlobalDesc &) const = default;
};

struct GlobalPlacement {
  uint64_t offset;     // the global's header (and lock): sonde_map* / sonde_stats* = base + offset
  uint64_t dataOffset; // scalar long / string storage: base + dataOffset
  uint64_t size;       // bytes from offset

  bool operator==(const GlobalPlacement &) const = default;
};

class GlobalLayout {
public:
  // Lays out `globals` in order. Fails (message in *error) on a descriptor stap would
  // reject: more than 9 keys, a wrapping scalar, a bad histogram or variance shift.
  static std::optional<GlobalLayout> build(std::vector<GlobalDesc> globals,
                                           const sonde_limits &limits, uint32_t cpuSlots,
                                           std::string *error);

  const std::vector<GlobalDesc> &globals() const { return globals_; }
  const std::vector<GlobalPlacement> &placements() const { return placements_; }
  const sonde_limits &limits() const { return limits_; }
  uint32_t cpuSlots() const { return cpuSlots_; }
  uint64_t segmentSize() const { return segmentSize_; }
  // Index of the global named `name`, or -1.
  int find(const std::string &name) const;

  std::vector<uint8_t> serialize() const;
  static std::optional<GlobalLayout> deserialize(const uint8_t *data, size_t size,
                                                 std::string *error);
  // FNV-1a of serialize(): a segment refuses modules built for another layout.
  uint64_t fingerprint() const;

  // Writes every global's header into a zeroed segment (locks, static shapes).
  void initialize(void *base) const;

private:
  std::vector<GlobalDesc> globals_;
  std::vector<GlobalPlacement> placements_;
  sonde_limits limits_{};
  uint32_t cpuSlots_ = 1;
  uint64_t segmentSize_ = 0;
};

// stap's defaults for every limit.
sonde_limits defaultLimits();

// Per-CPU slots to give scalar stats on this host (configured CPUs).
uint32_t hostCpuSlots();

} // namespace sonde::values
