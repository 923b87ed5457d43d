// strlen, substr, stringat, isinstr, strpos, str_replace (tapset/string.stp).
#include "runtime/format/TextWriter.h"
#include "runtime/strings/StringAbi.h"

#include <cstring>

using sonde::rt::TextWriter;

extern "C" int64_t sonde_str_strlen(const char *s) { return static_cast<int64_t>(std::strlen(s)); }

extern "C" size_t sonde_str_substr(const char *s, int64_t start, int64_t length, char *out,
                                   size_t cap) {
  if (cap == 0)
    return 0;
  out[0] = '\0';
  // stap copies with strlcpy(out, s + start, clamp(length + 1, 0, MAXSTRINGLEN));
  // the + 1 wraps for INT64_MAX, which then copies nothing.
  const int64_t size = static_cast<int64_t>(static_cast<uint64_t>(length) + 1); // wraps like stap's
  if (size <= 0)
    return 0;
  const size_t len = std::strlen(s);
  if (start < 0 || static_cast<uint64_t>(start) >= len)
    return 0;
  size_t n = len - static_cast<size_t>(start);
  const size_t limit = static_cast<uint64_t>(size) < cap ? static_cast<size_t>(size) : cap;
  n = n < limit - 1 ? n : limit - 1;
  std::memcpy(out, s + start, n);
  out[n] = '\0';
  return n;
}

extern "C" const char *sonde_str_stringat(const char *s, int64_t pos, int64_t *result) {
  *result = 0;
  if (pos < 0 || static_cast<uint64_t>(pos) >= std::strlen(s))
    return "Position out of bounds";
  *result = static_cast<signed char>(s[pos]);
  return nullptr;
}

extern "C" int64_t sonde_str_isinstr(const char *s1, const char *s2) {
  return std::strstr(s1, s2) != nullptr ? 1 : 0;
}

extern "C" int64_t sonde_str_strpos(const char *s1, const char *s2) {
  const char *found = std::strstr(s1, s2);
  return found != nullptr ? found - s1 : -1;
}

extern "C" size_t sonde_str_replace(const char *s, const char *find, const char *replacement,
                                    char *out, size_t cap) {
  TextWriter w(out, cap);
  const size_t findLength = std::strlen(find);
  if (findLength == 0) {
    w.write(s);
    return w.terminate();
  }
  const char *rest = s;
  for (const char *hit; (hit = std::strstr(rest, find)) != nullptr; rest = hit + findLength) {
    w.write(rest, static_cast<size_t>(hit - rest));
    w.write(replacement);
  }
  w.write(rest);
  return w.terminate();
}
