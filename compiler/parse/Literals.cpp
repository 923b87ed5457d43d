#include "parse/Literals.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>

namespace sonde::parse {

std::optional<int64_t> parseNumber(std::string_view text, bool negated) {
  std::string s(text);
  if (s.empty() || !std::isdigit(static_cast<unsigned char>(s[0])))
    return std::nullopt;
  errno = 0;
  char *end = nullptr;
  unsigned long long v = std::strtoull(s.c_str(), &end, 0);
  if (errno == ERANGE || errno == EINVAL || end == nullptr || *end != '\0')
    return std::nullopt;
  if (negated) {
    if (v > 9223372036854775808ULL)
      return std::nullopt;
    return static_cast<int64_t>(0ULL - v);
  }
  return static_cast<int64_t>(v);
}

bool isTerminatedString(std::string_view raw) {
  if (raw.size() < 2 || raw.front() != '"')
    return false;
  for (size_t i = 1; i < raw.size(); ++i) {
    if (raw[i] == '\\')
      ++i;
    else if (raw[i] == '"')
      return i + 1 == raw.size();
  }
  return false;
}

namespace {

int hexValue(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

} // namespace

std::string decodeString(std::string_view raw) {
  std::string_view body = raw;
  if (!body.empty() && body.front() == '"')
    body.remove_prefix(1);
  if (isTerminatedString(raw))
    body.remove_suffix(1);
  std::string out;
  out.reserve(body.size());
  for (size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (c != '\\' || i + 1 >= body.size()) {
      out += c;
      continue;
    }
    char e = body[++i];
    switch (e) {
    case 'a': out += '\a'; break;
    case 'b': out += '\b'; break;
    case 'f': out += '\f'; break;
    case 'n': out += '\n'; break;
    case 'r': out += '\r'; break;
    case 't': out += '\t'; break;
    case 'v': out += '\v'; break;
    case 'x': {
      int value = 0, digits = 0;
      while (digits < 2 && i + 1 < body.size() && hexValue(body[i + 1]) >= 0) {
        value = value * 16 + hexValue(body[++i]);
        ++digits;
      }
      out += digits ? static_cast<char>(value) : 'x';
      break;
    }
    default:
      if (e >= '0' && e <= '7') {
        int value = e - '0';
        for (int digits = 1;
             digits < 3 && i + 1 < body.size() && body[i + 1] >= '0' && body[i + 1] <= '7';
             ++digits)
          value = value * 8 + (body[++i] - '0');
        out += static_cast<char>(value);
      } else {
        out += e; // \\ \" \' and unknown escapes
      }
    }
  }
  return out;
}

} // namespace sonde::parse
