#include "runtime/session/SessionFacts.h"

#include <cstring>
#include <ctime>
#include <unistd.h>

namespace sonde::session {

void captureSessionFacts(sonde_segment *seg) {
  values::SessionFacts &facts = values::segmentHeader(seg).facts;
  facts.consumerUid = getuid();
  tzset();
  time_t now = time(nullptr);
  tm local{};
  if (localtime_r(&now, &local)) {
    facts.tzSecondsWest = static_cast<int32_t>(-local.tm_gmtoff);
    std::strncpy(facts.tzName, local.tm_zone ? local.tm_zone : "", sizeof facts.tzName - 1);
  }
}

} // namespace sonde::session
