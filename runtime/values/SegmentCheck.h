// sonde's full check of a state segment it created, before it trusts the
// script state enough to run end probes and print globals: the header's static
// fields, then every global under its lock (an array's count, order list, index
// and free list; stats slots; string terminators). Only damage a traced process
// could have done is looked for: what the runtime itself never leaves behind.
#pragma once

#include "runtime/values/GlobalLayout.h"
#include "runtime/values/Segment.h"

#include <optional>
#include <string>

namespace sonde::values {

// The first damage found (also noted in the segment's shadow), or nullopt.
// `handlersDone`: sonde runs no handler any more and every agent detached, so a
// lock held in sonde's name is damage. A global whose lock another live process
// holds (it may be stuck in a handler) is left unchecked.
std::optional<std::string> checkSegment(const Segment &segment, const GlobalLayout &layout,
                                        bool handlersDone);

} // namespace sonde::values
