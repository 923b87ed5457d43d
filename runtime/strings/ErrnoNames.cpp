// errno_str (tapset/errno.stp): the symbolic name of an errno value, from the
// same list of names stap compiles in, numbered by this platform's <errno.h>.
#include "runtime/format/TextWriter.h"
#include "runtime/strings/ErrnoList.h"
#include "runtime/strings/StringAbi.h"

#include <cerrno>
#include <cstdint>

namespace {

struct ErrnoName {
  int number;
  const char *name;
};

#define NAME(e) {e, #e},
constexpr ErrnoName kNames[] = {SONDE_ERRNO_NAMES(NAME)
#if defined(EDEADLOCK) && EDEADLOCK != EDEADLK
                                    NAME(EDEADLOCK)
#endif
};
#undef NAME

const char *nameOf(uint64_t err) {
  for (const ErrnoName &e : kNames)
    if (static_cast<uint64_t>(e.number) == err)
      return e.name;
  return "";
}

} // namespace

extern "C" size_t sonde_str_errno_str(int64_t err, char *out, size_t cap) {
  // The sign is ignored: syscalls return -ENOENT.
  const uint64_t magnitude = err < 0 ? 0 - static_cast<uint64_t>(err) : static_cast<uint64_t>(err);
  sonde::rt::TextWriter w(out, cap);
  w.write(nameOf(magnitude));
  return w.terminate();
}
