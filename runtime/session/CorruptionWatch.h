// What the session knows of damage traced processes did to what sonde reads
// from them: the state segment (its header, then every global) and the record
// transport (rings, messages, records). The first damage found ends the session
// with an error naming it; the output written before stays as it was.
#pragma once

#include "runtime/session/RecordOutput.h"
#include "runtime/values/GlobalLayout.h"
#include "runtime/values/Segment.h"

#include <iosfwd>
#include <optional>
#include <string>

namespace sonde::session {

class CorruptionWatch {
public:
  CorruptionWatch(const values::Segment &segment, const values::GlobalLayout &layout,
                  const RecordOutput *records)
      : segment_(segment), layout_(layout), records_(records) {}

  // Cheap, while targets run: the segment header and what readers noted.
  bool found();
  // Every global, under its lock; `handlersDone` as values::checkSegment.
  bool check(bool handlersDone);
  // Says what was found, once ("sonde: ERROR: ..."); false if nothing was.
  bool report(std::ostream &err);

private:
  std::optional<std::string> damage();

  const values::Segment &segment_;
  const values::GlobalLayout &layout_;
  const RecordOutput *records_;
  bool reported_ = false;
};

} // namespace sonde::session
