// text_str, text_strn, string_quoted, user_buffer_quoted: stap's _stp_text_str
// (runtime/stp_string.c), which escapes a string (or a buffer, NULs included)
// for display and can quote and shorten it.
#include "runtime/strings/ShortEscape.h"
#include "runtime/strings/StringAbi.h"

#include <cstdint>
#include <limits>

namespace {

// Decodes one UTF-8 sequence at in (at most `size` bytes) into *c and returns its
// length. Anything but a well-formed, shortest-form 2-4 byte sequence of a
// non-surrogate code point up to U+10FFFF is one verbatim byte. Reading a byte
// at or past `readable` is a fault: -1.
int decodeUtf8(const unsigned char *in, int64_t size, int64_t readable, int32_t *c) {
  if (readable <= 0)
    return -1;
  const unsigned char lead = in[0];
  int n = 1;
  int32_t cp = 0;
  if ((lead & 0xE0) == 0xC0 && size >= 2) {
    n = 2;
    cp = lead & 0x1F;
  } else if ((lead & 0xF0) == 0xE0 && size >= 3) {
    n = 3;
    cp = lead & 0x0F;
  } else if ((lead & 0xF8) == 0xF0 && size >= 4) {
    n = 4;
    cp = lead & 0x07;
  }
  bool wellFormed = n > 1;
  for (int i = 1; wellFormed && i < n; ++i) {
    if (i >= readable)
      return -1;
    if ((in[i] & 0xC0) != 0x80)
      wellFormed = false;
    else
      cp = (cp << 6) | (in[i] & 0x3F);
  }
  if (wellFormed && ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF || cp < 0x80 ||
                     (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000)))
    wellFormed = false;
  if (!wellFormed) {
    *c = lead;
    return 1;
  }
  *c = cp;
  return n;
}

char shortEscape(int32_t c) { return c == '"' ? '"' : sonde_short_escape(c); }

char hexDigit(int32_t nibble) {
  return static_cast<char>(nibble < 10 ? '0' + nibble : 'A' + nibble - 10);
}

// The escaping core. `maxString` is MAXSTRINGLEN (the output capacity); inLimit
// and outLimit are stap's inlen/outlen (<= 0 or too large mean maxString - 1).
// A `buffer` goes on past NUL bytes, of which only the first `readable` bytes may
// be read. Returns the length written, or -1 when the input needed more.
int64_t textStr(const char *input, int64_t inLimit, int64_t outLimit, bool quoted, bool buffer,
                int64_t readable, char *out, size_t maxString) {
  if (maxString == 0)
    return 0;
  const int64_t longest = static_cast<int64_t>(maxString) - 1;
  int64_t inlen = inLimit <= 0 || inLimit > longest ? longest : inLimit;
  int64_t outlen = outLimit <= 0 || outLimit > longest ? longest : outLimit;
  size_t o = 0;
  auto put = [&](char ch) {
    if (o < maxString - 1)
      out[o++] = ch;
  };
  if (quoted) {
    outlen = (outlen > 5 ? outlen : 5) - 2;
    put('"');
  }
  // The first escape that a final "..." could cut in half.
  int64_t esc = -1;
  int64_t escLength = 0;
  const auto *in = reinterpret_cast<const unsigned char *>(input);
  int32_t c = 0;
  while (inlen > 0) {
    const int n = decodeUtf8(in, inlen, readable, &c);
    if (n < 0)
      return -1;
    if ((c == 0 && !buffer) || outlen <= 0)
      break;
    in += n;
    inlen -= n;
    readable -= n;
    int64_t num = 1;
    if (n > 1) {
      num = c <= 0xFFFF ? 6 : 10; // \uXXXX or \UXXXXXXXX
    } else if (c < 0x7f && c >= 0x20 && c != '"' && c != '\\') {
      put(static_cast<char>(c));
      outlen -= 1;
      continue;
    } else {
      num = shortEscape(c) != 0 ? 2 : 4; // \n or \ooo
    }
    if (esc < 0 && outlen - 3 < num) {
      esc = static_cast<int64_t>(o);
      escLength = num;
    }
    if (outlen < num)
      break;
    put('\\');
    if (n > 1) {
      put(c <= 0xFFFF ? 'u' : 'U');
      for (int64_t i = num - 3; i >= 0; --i)
        put(hexDigit((c >> (i * 4)) & 0xF));
    } else if (shortEscape(c) != 0) {
      put(shortEscape(c));
    } else if (c == 0) {
      put('0'); // stap writes a NUL as \0, though it counts 4 bytes for it
    } else {
      put(static_cast<char>('0' + ((c >> 6) & 3)));
      put(static_cast<char>('0' + ((c >> 3) & 7)));
      put(static_cast<char>('0' + (c & 7)));
    }
    outlen -= num;
  }
  if (quoted) {
    if (c != 0 && inlen > 0) {
      // Cut short: end with `"...`, dropping an escape rather than splitting it.
      const int64_t cut = static_cast<int64_t>(o) - 3 + outlen;
      o = static_cast<size_t>(esc >= 0 && esc < cut && cut < esc + escLength ? esc : cut);
      put('"');
      put('.');
      put('.');
      put('.');
    } else {
      put('"');
    }
  }
  out[o] = '\0';
  return static_cast<int64_t>(o);
}

constexpr int64_t kInMemory = std::numeric_limits<int64_t>::max();

} // namespace

extern "C" size_t sonde_str_text_str(const char *s, char *out, size_t cap) {
  return static_cast<size_t>(textStr(s, 0, 0, false, false, kInMemory, out, cap));
}

extern "C" size_t sonde_str_text_strn(const char *s, int64_t len, int64_t quoted, char *out,
                                      size_t cap) {
  // stap clamps len to [0, MAXSTRINGLEN] before passing it on as outlen.
  const int64_t limit = len < 0 ? 0 : len;
  return static_cast<size_t>(textStr(s, 0, limit, quoted != 0, false, kInMemory, out, cap));
}

extern "C" size_t sonde_str_string_quoted(const char *s, char *out, size_t cap) {
  return static_cast<size_t>(textStr(s, static_cast<int64_t>(cap), static_cast<int64_t>(cap), true,
                                     false, kInMemory, out, cap));
}

extern "C" int64_t sonde_str_buffer_quoted(const char *buf, int64_t readable, int64_t inlen,
                                           int64_t outlen, char *out, size_t cap) {
  return textStr(buf, inlen, outlen, true, true, readable, out, cap);
}
