#include "runtime/session/AgentReportLines.h"

#include <algorithm>
#include <cerrno>
#include <unistd.h>

namespace sonde::session {

namespace {

constexpr size_t kBytesPerCall = 64 * 1024;
constexpr size_t kLineMax = 4096;

} // namespace

bool AgentReportLines::readFrom(int fd) {
  char buf[4096];
  for (size_t taken = 0; taken < kBytesPerCall;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && errno == EAGAIN)
      return true;
    if (n <= 0)
      return false;
    taken += static_cast<size_t>(n);
    pending_.append(buf, static_cast<size_t>(n));
    // The part of an overlong line past its first kLineMax bytes goes.
    size_t nl = pending_.find('\n');
    if (nl == std::string::npos && pending_.size() > kLineMax) {
      pending_.resize(kLineMax);
      cutLine_ = true;
    } else if (cutLine_ && nl != std::string::npos) {
      pending_.erase(kLineMax, nl - kLineMax);
      cutLine_ = false;
    }
  }
  return true;
}

std::optional<std::string> AgentReportLines::next() {
  size_t nl = pending_.find('\n');
  if (nl == std::string::npos)
    return std::nullopt;
  std::string line = pending_.substr(0, std::min(nl, kLineMax));
  pending_.erase(0, nl + 1);
  return line;
}

} // namespace sonde::session
