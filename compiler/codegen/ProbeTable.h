// What the module's probe table says about each derived probe: the kind of event
// that runs it (runtime/session/ModuleAbi.h), its order or period, pp() and pn().
// The probe family, its arguments and their units come from probes/ProbeFamilies;
// this file turns them into the numbers the runtime schedules by.
#pragma once

#include "ast/Ast.h"
#include "codegen/CodegenOptions.h"

#include <cstdint>
#include <string>

namespace sonde::codegen {

struct ProbeInfo {
  enum class Disposition : uint8_t {
    Emit,        // gets a handler and a row in the probe table
    Never,       // `never`: type-checked, never compiled
    Unsupported, // a family this build cannot run (message in `problem`)
  } disposition = Disposition::Emit;
  std::string problem;

  uint32_t kind = 0; // enum sonde_probe_kind
  int64_t sequence = 0;
  int64_t periodNs = 0, randomizeNs = 0;
  std::string pp, pn;
  // process("PATH") lifecycle probes: the executable they are limited to.
  std::string processPath;
  // begin/end/error run in the session state the runtime chooses; timers return
  // at once unless the session is running. Probes that run in traced processes
  // (markers, process/thread lifecycle) do not check: the agent tests the
  // session state before it enters any handler, so the event path pays once.
  bool checksSessionRunning = true;
  // Probes without context (begin/end/error/timer): `$` variables never resolve.
  bool hasContext = false;
};

ProbeInfo describeProbe(const ast::DerivedProbe &probe, const CodegenOptions &opts);

} // namespace sonde::codegen
