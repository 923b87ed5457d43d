// Kernel probes as the session drives them: compiled to a BPF object, loaded
// and attached by an implementation that links libbpf (probes/tracepoint/
// KernelProbeSet), outside this runtime, which traced processes also load.
//
// Shared state: globals kernel probes use live in BPF maps while they run.
// Probes in sonde (begin, end, timers) see them through the segment: the
// session imports them before each timer and before the end probes, and
// exports what a timer changed (a deleted array, a reset counter) back.
#pragma once

#include <cstdint>
#include <string>

namespace sonde::session {

struct Runtime;

class KernelProbes {
public:
  virtual ~KernelProbes() = default;
  // After begin probes: loads the programs with the segment's values of the
  // globals they use, starts draining their records into rt's output, and
  // attaches them. False (message in *error) if anything fails.
  virtual bool start(Runtime &rt, std::string *error) = 0;
  // BPF maps -> segment, for the globals kernel probes use.
  virtual void importState() = 0;
  // Segment -> BPF maps, for what changed since the last import.
  virtual void exportChanges() = 0;
  // Detaches, then drains every record left.
  virtual void stop() = 0;
  // Records the full ring buffer refused.
  virtual uint64_t lostRecords() const = 0;
  // After start(): where the programs run, in one line for -v.
  virtual std::string attachment() const = 0;
};

} // namespace sonde::session
