// ctime (tapset/linux/ctime.stp). msecs/usecs/nsecs_to_string are a tapset
// (stdlib/units.probe).
#include "runtime/format/Conversions.h"
#include "runtime/format/TextWriter.h"
#include "runtime/strings/StringAbi.h"

#include <cstdint>

using namespace sonde::rt;

namespace {

constexpr int64_t kSecondsPerDay = 24 * 60 * 60;

bool isLeap(int64_t year) { return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0; }

// Calendar fields of a UTC time, by stap's own day-counting loop.
struct CivilTime {
  int64_t year;
  int month;   // 0-11
  int64_t day; // 1-31
  int weekday; // 0 = Sunday
  int64_t hour, minute, second;
};

CivilTime civilTime(int64_t secs) {
  static constexpr int kMonthDays[2][12] = {{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31},
                                            {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}};
  CivilTime t{};
  int64_t days = secs / kSecondsPerDay;
  int64_t rem = secs % kSecondsPerDay;
  if (rem < 0) {
    rem += kSecondsPerDay;
    --days;
  }
  t.hour = rem / 3600;
  t.minute = rem % 3600 / 60;
  t.second = rem % 60;
  t.weekday = static_cast<int>(((4 + days) % 7 + 7) % 7); // 1970-01-01 was a Thursday
  t.year = 1970;
  if (days >= 0) {
    while (days >= (isLeap(t.year) ? 366 : 365))
      days -= isLeap(t.year++) ? 366 : 365;
  } else {
    while (days < 0)
      days += isLeap(--t.year) ? 366 : 365;
  }
  const int *lengths = kMonthDays[isLeap(t.year) ? 1 : 0];
  for (t.month = 0; days >= lengths[t.month]; ++t.month)
    days -= lengths[t.month];
  t.day = days + 1;
  return t;
}

void writeTwoDigits(TextWriter &w, int64_t v) {
  writeNumber(w, static_cast<uint64_t>(v), 10, -1, 2, kSigned);
}

} // namespace

extern "C" const char *sonde_str_ctime(int64_t secs, char *out, size_t cap, size_t *length) {
  static constexpr char kDays[7][4] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static constexpr char kMonths[12][4] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                          "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  TextWriter w(out, cap);
  // stap keeps to 32-bit time_t so the result is always 24 characters.
  const char *error = nullptr;
  if (secs > INT32_MAX)
    error = "Time too far in the future to be converted";
  else if (secs < INT32_MIN)
    error = "Time too far in the past to be converted";
  if (error == nullptr) {
    const CivilTime t = civilTime(secs);
    w.write(kDays[t.weekday], 3);
    w.put(' ');
    w.write(kMonths[t.month], 3);
    writeNumber(w, static_cast<uint64_t>(t.day), 10, 3, -1, kSigned);
    w.put(' ');
    writeTwoDigits(w, t.hour);
    w.put(':');
    writeTwoDigits(w, t.minute);
    w.put(':');
    writeTwoDigits(w, t.second);
    w.put(' ');
    writeDecimal(w, t.year);
  }
  const size_t n = w.terminate();
  if (length != nullptr)
    *length = n;
  return error;
}
