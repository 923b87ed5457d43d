// printf and sprintf: runs a parsed format over its arguments, the way stap's
// compiled printf (translate.cxx, emit_compiled_printfs) does.
#include "runtime/format/Conversions.h"
#include "runtime/format/FormatAbi.h"
#include "runtime/format/TextWriter.h"

#include <cstdint>
#include <cstring>

using namespace sonde::rt;

namespace {

// stap refuses %m/%M dumps larger than a page.
constexpr int64_t kMaxMemoryDump = 4096;

// A '*' argument: stap casts the long to int (keeping the low 32 bits), then
// clamps to [0, room]; negative widths do not left-justify.
int64_t starValue(int64_t arg, size_t room) {
  const int64_t v = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(arg)));
  if (v < 0)
    return 0;
  return static_cast<uint64_t>(v) > room ? static_cast<int64_t>(room) : v;
}

int64_t givenValue(int32_t v, size_t room) {
  if (v < 0)
    return 0;
  return static_cast<uint64_t>(v) > room ? static_cast<int64_t>(room) : v;
}

void setError(SondeFormatError *error, void (*write)(TextWriter &, int64_t), int64_t value) {
  if (error == nullptr)
    return;
  TextWriter w(error->text, sizeof error->text);
  write(w, value);
  w.terminate();
  error->message = error->text;
}

void tooManyBytes(TextWriter &w, int64_t size) {
  writeDecimal(w, size);
  w.write(" is too many bytes for a memory dump");
}

void readFault(TextWriter &w, int64_t addr) {
  w.write("read fault [man error::fault] at 0x");
  writeNumber(w, static_cast<uint64_t>(addr), 16, -1, -1, 0);
}

// The byte count a %m/%M dumps, before any clamping; `first` is the index of the
// item's first argument.
int64_t memoryDumpSize(const SondeFormatItem &item, const SondeFormatArg *args, uint32_t first) {
  if (item.precision_kind == SONDE_SIZE_STAR)
    return args[first + (item.width_kind == SONDE_SIZE_STAR ? 1 : 0)].i;
  if (item.precision_kind == SONDE_SIZE_GIVEN && item.precision > 0)
    return item.precision;
  return 1;
}

// stap checks every dump size before printing anything, so an oversized dump
// anywhere in the format is the error, even after an earlier read fault.
bool findOversizedDump(const SondeFormatSpec &spec, const SondeFormatArg *args, int64_t *size) {
  uint32_t arg = 0;
  for (uint32_t k = 0; k < spec.item_count; ++k) {
    const SondeFormatItem &item = spec.items[k];
    if (item.conv == SONDE_CONV_LITERAL || item.conv == SONDE_CONV_PERCENT)
      continue;
    if (item.conv == SONDE_CONV_MEMORY || item.conv == SONDE_CONV_MEMORY_HEX) {
      const int64_t bytes = memoryDumpSize(item, args, arg);
      if (bytes > kMaxMemoryDump) {
        *size = bytes;
        return true;
      }
    }
    arg += 1 + (item.width_kind == SONDE_SIZE_STAR) + (item.precision_kind == SONDE_SIZE_STAR);
  }
  return false;
}

// How a run treats its output: stap's sprintf writes into MAXSTRINGLEN bytes;
// its printf first sizes the output (widths clamped to its buffer size), reserves
// exactly that much, then writes with widths clamped to what is left of it.
enum class Mode { Print, Sprint, Measure };

// The '*' / digits value of a width or precision, clamped as stap clamps it.
int64_t sizeValue(uint8_t kind, int32_t given, const SondeFormatArg *args, uint32_t &arg,
                  size_t room) {
  if (kind == SONDE_SIZE_STAR)
    return starValue(args[arg++].i, room);
  if (kind == SONDE_SIZE_GIVEN)
    return givenValue(given, room);
  return -1;
}

bool run(const SondeFormatSpec &spec, const SondeFormatArg *args, TextWriter &w, Mode mode,
         const SondeMemoryReader *memory, SondeFormatError *error);

// stap's printf output size: what it reserves before writing.
size_t measuredSize(const SondeFormatSpec &spec, const SondeFormatArg *args) {
  TextWriter counter(nullptr, SIZE_MAX);
  run(spec, args, counter, Mode::Measure, nullptr, nullptr);
  return counter.size() < SONDE_PRINT_BUFFER_SIZE ? counter.size() : SONDE_PRINT_BUFFER_SIZE;
}

// Formats into w; false after a %m/%M error (then *error says why).
bool run(const SondeFormatSpec &spec, const SondeFormatArg *args, TextWriter &w, Mode mode,
         const SondeMemoryReader *memory, SondeFormatError *error) {
  uint32_t arg = 0;
  for (uint32_t k = 0; k < spec.item_count; ++k) {
    const SondeFormatItem &item = spec.items[k];
    switch (item.conv) {
    case SONDE_CONV_LITERAL: w.write(spec.text + item.offset, item.length); continue;
    case SONDE_CONV_PERCENT: w.put('%'); continue;
    default: break;
    }
    const uint32_t first = arg;
    const size_t room = mode == Mode::Measure ? SONDE_PRINT_BUFFER_SIZE : w.room();
    const int64_t width = sizeValue(item.width_kind, item.width, args, arg, room);
    int64_t precision = sizeValue(item.precision_kind, item.precision, args, arg, room);
    const SondeFormatArg value = args[arg++];
    const unsigned flags = item.flags;
    switch (item.conv) {
    case SONDE_CONV_SIGNED_DEC:
      writeNumber(w, static_cast<uint64_t>(value.i), 10, width, precision, flags | kSigned);
      break;
    case SONDE_CONV_UNSIGNED_DEC:
      writeNumber(w, static_cast<uint64_t>(value.i), 10, width, precision, flags);
      break;
    case SONDE_CONV_HEX_LOWER:
      writeNumber(w, static_cast<uint64_t>(value.i), 16, width, precision, flags);
      break;
    case SONDE_CONV_HEX_UPPER:
      writeNumber(w, static_cast<uint64_t>(value.i), 16, width, precision, flags | kUpper);
      break;
    case SONDE_CONV_OCTAL:
      writeNumber(w, static_cast<uint64_t>(value.i), 8, width, precision, flags);
      break;
    case SONDE_CONV_POINTER:
      writeNumber(w, static_cast<uint64_t>(value.i), 16, width, precision, flags | kHash);
      break;
    case SONDE_CONV_CHAR: writeChar(w, static_cast<char>(value.i), width, flags); break;
    case SONDE_CONV_STRING: writeString(w, value.s, width, precision, flags); break;
    case SONDE_CONV_BINARY:
      // Only here can stap's exact reservation, rather than the buffer size,
      // change the output: an invalid precision (3, 5, 9...) cut down to what
      // is left of the reservation may become a valid 1, 2, 4 or 8 and write more
      // than was reserved; the reservation is then the limit.
      if (mode == Mode::Print && precision > 1 && precision != 2 && precision != 4 &&
          precision != 8) {
        const size_t reserved = measuredSize(spec, args);
        w.shrink(reserved);
        const int64_t left = reserved > w.size() ? static_cast<int64_t>(reserved - w.size()) : 0;
        precision = precision < left ? precision : left;
      }
      writeBinary(w, value.i, width, precision, flags);
      break;
    case SONDE_CONV_MEMORY:
    case SONDE_CONV_MEMORY_HEX: {
      int64_t bytes = memoryDumpSize(item, args, first);
      if (mode != Mode::Measure && bytes > kMaxMemoryDump) {
        setError(error, tooManyBytes, bytes);
        return false;
      }
      uint64_t fault = 0;
      if (!writeMemory(w, static_cast<uint64_t>(value.i), width, precision,
                       item.conv == SONDE_CONV_MEMORY_HEX, flags, memory, &fault)) {
        if (findOversizedDump(spec, args, &bytes))
          setError(error, tooManyBytes, bytes);
        else
          setError(error, readFault, static_cast<int64_t>(fault));
        return false;
      }
      break;
    }
    default: break;
    }
  }
  return true;
}

} // namespace

extern "C" size_t sonde_format_print(const SondeFormatSpec *spec, const SondeFormatArg *args,
                                     char *out, size_t cap, const SondeMemoryReader *memory,
                                     SondeFormatError *error) {
  if (error != nullptr)
    error->message = nullptr;
  TextWriter w(out, cap);
  return run(*spec, args, w, Mode::Print, memory, error) ? w.size() : 0;
}

extern "C" size_t sonde_format_sprint(const SondeFormatSpec *spec, const SondeFormatArg *args,
                                      char *out, size_t cap, const SondeMemoryReader *memory,
                                      SondeFormatError *error) {
  if (error != nullptr)
    error->message = nullptr;
  TextWriter w(out, cap);
  if (!run(*spec, args, w, Mode::Sprint, memory, error)) {
    if (cap > 0)
      out[0] = '\0';
    return 0;
  }
  // %c of 0, %b and %0s can write NUL bytes: the string ends at the first.
  return strnlen(out, w.terminate());
}
