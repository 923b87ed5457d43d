#include "runtime/session/CorruptionWatch.h"

#include "runtime/values/SegmentCheck.h"
#include "runtime/values/SegmentShadow.h"

#include <ostream>

namespace sonde::session {

std::optional<std::string> CorruptionWatch::damage() {
  if (std::optional<std::string> found = values::segmentCorruption(segment_.base()))
    return found;
  if (records_)
    return records_->corruption();
  return std::nullopt;
}

bool CorruptionWatch::found() {
  values::checkSegmentHeader(segment_.base());
  return damage().has_value();
}

bool CorruptionWatch::check(bool handlersDone) {
  values::checkSegment(segment_, layout_, handlersDone);
  return damage().has_value();
}

bool CorruptionWatch::report(std::ostream &err) {
  std::optional<std::string> what = damage();
  if (!what)
    return false;
  // One write: traced processes may share the stream.
  if (!reported_)
    err << "sonde: ERROR: a traced process wrote over memory sonde reads: " + *what +
               "; the session ended there\n"
        << std::flush;
  reported_ = true;
  return true;
}

} // namespace sonde::session
