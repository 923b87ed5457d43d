#include "runtime/format/Conversions.h"

#include "runtime/strings/ShortEscape.h"

#include <cstring>

namespace sonde::rt {

namespace {

constexpr char kLowerDigits[] = "0123456789abcdef";
constexpr char kUpperDigits[] = "0123456789ABCDEF";

// "00" "01" ... "99": decimal digits are produced two at a time.
constexpr char kDigitPairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233"
    "34353637383940414243444546474849505152535455565758596061626364656667"
    "6869707172737475767778798081828384858687888990919293949596979899";

// Writes the decimal digits of v (< 10^8) ending at `end`; returns the first.
char *decimalBelow1e8(uint32_t v, char *end) {
  while (v >= 100) {
    end -= 2;
    std::memcpy(end, kDigitPairs + 2 * (v % 100), 2);
    v /= 100;
  }
  if (v >= 10) {
    end -= 2;
    std::memcpy(end, kDigitPairs + 2 * v, 2);
  } else {
    *--end = static_cast<char>('0' + v);
  }
  return end;
}

// Exactly 8 digits of v (< 10^8), zero-filled, ending at `end`; the two halves
// are independent, so their divisions overlap.
char *eightDigits(uint32_t v, char *end) {
  const uint32_t high = v / 10000;
  const uint32_t low = v % 10000;
  std::memcpy(end - 2, kDigitPairs + 2 * (low % 100), 2);
  std::memcpy(end - 4, kDigitPairs + 2 * (low / 100), 2);
  std::memcpy(end - 6, kDigitPairs + 2 * (high % 100), 2);
  std::memcpy(end - 8, kDigitPairs + 2 * (high / 100), 2);
  return end - 8;
}

// The digits of num in `base`, ending at `end`; returns the first. Decimal is
// split into 8-digit chunks of 32-bit arithmetic that the CPU overlaps, which
// keeps a 19-digit %d in the nanoseconds.
char *digitsOf(uint64_t num, unsigned base, const char *table, char *end) {
  if (base == 10) {
    if (num >= 100000000) {
      end = eightDigits(static_cast<uint32_t>(num % 100000000), end);
      num /= 100000000;
      if (num >= 100000000) {
        end = eightDigits(static_cast<uint32_t>(num % 100000000), end);
        num /= 100000000;
      }
    }
    return decimalBelow1e8(static_cast<uint32_t>(num), end);
  }
  const unsigned shift = base == 16 ? 4 : 3;
  do {
    *--end = table[num & (base - 1)];
    num >>= shift;
  } while (num != 0);
  return end;
}

bool isPrintableAscii(unsigned char c) { return c >= 0x20 && c < 0x7f; }

// The letter of a C escape for c, or 0 when it needs octal.
char shortEscape(char c) { return c == '\'' ? '\'' : sonde_short_escape(c); }

// %b accepts only these byte counts; anything else counts as absent.
int64_t binaryPrecision(int64_t p) { return p == 1 || p == 2 || p == 4 || p == 8 ? p : -1; }

void padTo(TextWriter &w, char c, int64_t width, int64_t used) {
  if (width > used)
    w.fill(c, static_cast<size_t>(width - used));
}

bool readBytes(const SondeMemoryReader *reader, uint64_t addr, unsigned char *dst, size_t n,
               bool user, uint64_t *fault) {
  if (n == 0)
    return true;
  if (reader != nullptr && reader->read != nullptr &&
      reader->read(reader->context, addr, dst, n, user ? 1 : 0) == 0)
    return true;
  // Find the first byte that cannot be read: stap reports that one.
  for (size_t i = 0; i < n; ++i) {
    if (reader == nullptr || reader->read == nullptr ||
        reader->read(reader->context, addr + i, dst + i, 1, user ? 1 : 0) != 0) {
      *fault = addr + i;
      return false;
    }
  }
  return true;
}

} // namespace

void writeNumber(TextWriter &w, uint64_t num, unsigned base, int64_t width, int64_t precision,
                 unsigned flags) {
  const char *digits = (flags & kUpper) ? kUpperDigits : kLowerDigits;
  char tmp[24];
  char *const end = tmp + sizeof tmp;
  // The common %d/%x: no width, precision, sign or prefix to arrange.
  if (width < 0 && precision < 0 && (flags & (kPlus | kSpace | kHash)) == 0) {
    const bool negative = (flags & kSigned) && static_cast<int64_t>(num) < 0;
    char *first = digitsOf(negative ? 0 - num : num, base, digits, end);
    if (negative)
      *--first = '-';
    w.write(first, static_cast<size_t>(end - first));
    return;
  }
  if (flags & kLeft)
    flags &= ~kZero;
  int64_t size = width;
  char sign = 0;
  if (flags & kSigned) {
    if (static_cast<int64_t>(num) < 0) {
      sign = '-';
      num = 0 - num; // INT64_MIN stays 2^63, printed in full
      --size;
    } else if (flags & kPlus) {
      sign = '+';
      --size;
    } else if (flags & kSpace) {
      sign = ' ';
      --size;
    }
  }
  const bool prefix = (flags & kHash) && (base == 16 || base == 8);
  if (prefix)
    size -= base == 16 ? 2 : 1;

  const char *first = digitsOf(num, base, digits, end);
  const int n = static_cast<int>(end - first);
  if (precision < n)
    precision = n;
  size -= precision;

  if (!(flags & (kZero | kLeft))) {
    padTo(w, ' ', size, 0);
    size = 0;
  }
  if (sign)
    w.put(sign);
  if (prefix) {
    w.put('0');
    if (base == 16)
      w.put(digits == kUpperDigits ? 'X' : 'x');
  }
  if (!(flags & kLeft)) {
    padTo(w, (flags & kZero) ? '0' : ' ', size, 0);
    size = 0;
  }
  padTo(w, '0', precision, n);
  w.write(first, static_cast<size_t>(n));
  padTo(w, ' ', size, 0);
}

int decimalWidth(int64_t value) {
  if (value == 0)
    return 1;
  int width = 0;
  uint64_t magnitude = static_cast<uint64_t>(value);
  if (value < 0) {
    ++width;
    magnitude = 0 - magnitude;
  }
  for (; magnitude != 0; magnitude /= 10)
    ++width;
  return width;
}

void writeChar(TextWriter &w, char c, int64_t width, unsigned flags) {
  const unsigned char byte = static_cast<unsigned char>(c);
  const bool escape = (flags & kHash) && (!isPrintableAscii(byte) || c == '\'' || c == '\\');
  const char letter = escape ? shortEscape(c) : 0;
  const int64_t size = !escape ? 1 : letter != 0 ? 2 : 4;
  if (!(flags & kLeft))
    padTo(w, ' ', width, size);
  if (!escape) {
    w.put(c);
  } else {
    w.put('\\');
    if (letter != 0) {
      w.put(letter);
    } else {
      w.put(static_cast<char>('0' + ((byte >> 6) & 3)));
      w.put(static_cast<char>('0' + ((byte >> 3) & 7)));
      w.put(static_cast<char>('0' + (byte & 7)));
    }
  }
  if (flags & kLeft)
    padTo(w, ' ', width, size);
}

void writeString(TextWriter &w, const char *s, int64_t width, int64_t precision, unsigned flags) {
  if (s == nullptr)
    s = "";
  // stap reads at most its print buffer size, or `precision` bytes.
  const size_t limit = precision < 0 || precision > SONDE_PRINT_BUFFER_SIZE
                           ? SONDE_PRINT_BUFFER_SIZE
                           : static_cast<size_t>(precision);
  const size_t len = strnlen(s, limit);
  const int64_t used = static_cast<int64_t>(len);
  if (!(flags & kLeft))
    padTo(w, ' ', width, used);
  w.write(s, len);
  if (flags & kLeft)
    padTo(w, ' ', width, used);
  if (flags & kZero) // stap's %0s ends the field with a NUL byte
    w.put('\0');
}

void writeBinary(TextWriter &w, int64_t num, int64_t width, int64_t precision, unsigned flags) {
  // An absent width defaults to the precision and vice versa; both to 8.
  precision = binaryPrecision(precision);
  if (width < 0) {
    if (precision < 0)
      precision = 8;
    width = precision;
  } else if (precision < 0) {
    precision = binaryPrecision(width);
    if (precision < 0)
      precision = 8;
  }
  if (!(flags & kLeft)) {
    padTo(w, '\0', width, precision);
    width = precision;
  }
  // The value is written whole or not at all.
  if (w.room() >= static_cast<size_t>(precision)) {
    unsigned char bytes[8];
    switch (precision) {
    case 1: {
      const auto v = static_cast<int8_t>(num);
      std::memcpy(bytes, &v, 1);
      break;
    }
    case 2: {
      const auto v = static_cast<int16_t>(num);
      std::memcpy(bytes, &v, 2);
      break;
    }
    case 4: {
      const auto v = static_cast<int32_t>(num);
      std::memcpy(bytes, &v, 4);
      break;
    }
    default: std::memcpy(bytes, &num, 8); break;
    }
    w.write(reinterpret_cast<const char *>(bytes), static_cast<size_t>(precision));
  }
  padTo(w, '\0', width, precision);
}

bool writeMemory(TextWriter &w, uint64_t addr, int64_t width, int64_t precision, bool hex,
                 unsigned flags, const SondeMemoryReader *reader, uint64_t *fault) {
  const bool user = (flags & kHash) != 0;
  const int64_t len = precision > 0 ? precision : 1;
  const int64_t shown = hex ? len * 2 : len;
  if (!(flags & kLeft))
    padTo(w, ' ', width, shown);
  if (hex) {
    // Two characters per byte, and only bytes whose both characters fit are read.
    int64_t done = 0;
    while (done < len && w.room() >= 2) {
      unsigned char chunk[64];
      const size_t fits = w.room() / 2;
      size_t n = static_cast<size_t>(len - done);
      n = n < sizeof chunk ? n : sizeof chunk;
      n = n < fits ? n : fits;
      if (w.counting()) {
        w.advance(2 * n);
        done += static_cast<int64_t>(n);
        continue;
      }
      if (!readBytes(reader, addr + static_cast<uint64_t>(done), chunk, n, user, fault))
        return false;
      for (size_t i = 0; i < n; ++i) {
        w.put(kLowerDigits[chunk[i] >> 4]);
        w.put(kLowerDigits[chunk[i] & 0xf]);
      }
      done += static_cast<int64_t>(n);
    }
  } else {
    size_t n = static_cast<size_t>(len);
    n = n < w.room() ? n : w.room();
    if (!w.counting() &&
        !readBytes(reader, addr, reinterpret_cast<unsigned char *>(w.cursor()), n, user, fault))
      return false;
    w.advance(n);
  }
  if (flags & kLeft)
    padTo(w, ' ', width, shown);
  if (flags & kZero)
    w.put('\0');
  return true;
}

} // namespace sonde::rt
