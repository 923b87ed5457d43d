// The individual printf conversions, each reproducing the SystemTap runtime's
// (runtime/vsprintf.c: number, _stp_vsprint_char/_memory/_binary), quirks
// included: %#o of 0 is "00", %#x of 0 is "0x0", '0' still pads when a
// precision is given, %0s appends a NUL byte. Width and precision are -1 when
// absent, otherwise already clamped to [0, room] by the caller as stap does.
#pragma once

#include "runtime/format/FormatAbi.h"
#include "runtime/format/TextWriter.h"

#include <cstdint>

namespace sonde::rt {

// SondeFormatFlag bits plus what the conversion itself implies.
enum ConvFlag : unsigned {
  kLeft = SONDE_FMT_LEFT,
  kPlus = SONDE_FMT_PLUS,
  kSpace = SONDE_FMT_SPACE,
  kZero = SONDE_FMT_ZERO,
  kHash = SONDE_FMT_HASH,
  kSigned = 32, // %d %i: the value is signed
  kUpper = 64   // %X: upper-case digits and "0X"
};

// %d %u %x %X %o %p; base is 8, 10 or 16.
void writeNumber(TextWriter &w, uint64_t num, unsigned base, int64_t width, int64_t precision,
                 unsigned flags);

// A long in plain decimal, as print() and %d show it.
inline void writeDecimal(TextWriter &w, int64_t value) {
  writeNumber(w, static_cast<uint64_t>(value), 10, -1, -1, kSigned);
}

// Decimal digits of `value`, a '-' included (stap's needed_space()).
int decimalWidth(int64_t value);

// %c; with '#' non-printables become C escapes ("\t", "\000").
void writeChar(TextWriter &w, char c, int64_t width, unsigned flags);

// %s; precision limits the bytes taken from `s`.
void writeString(TextWriter &w, const char *s, int64_t width, int64_t precision, unsigned flags);

// %b: the value's low 1, 2, 4 or 8 bytes in host order, padded with NULs.
void writeBinary(TextWriter &w, int64_t num, int64_t width, int64_t precision, unsigned flags);

// %m (raw) and %M (hex): `precision` bytes (1 when absent) read at `addr` through
// `reader`, user memory with '#'. Returns false with *fault set to the first
// unreadable address.
bool writeMemory(TextWriter &w, uint64_t addr, int64_t width, int64_t precision, bool hex,
                 unsigned flags, const SondeMemoryReader *reader, uint64_t *fault);

} // namespace sonde::rt
