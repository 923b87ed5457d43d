// Helpers for the formatting tests: run a printf format the way generated code
// will (parse once, then print or sprint into a bounded buffer).
#pragma once

#include "runtime/format/FormatAbi.h"
#include "runtime/format/FormatParser.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace sonde::test {

// One printf argument: a long or a string.
struct FmtArg {
  FmtArg(int v) { a.i = v; }
  FmtArg(long long v) { a.i = v; }
  FmtArg(unsigned long long v) { a.i = static_cast<int64_t>(v); }
  FmtArg(const char *s) { a.s = s; }
  SondeFormatArg a;
};

struct FormatOutcome {
  std::string text;  // the bytes written (sprint: up to the NUL)
  std::string error; // the runtime error, "" when none
};

// MAXSTRINGLEN as stap sets it on 64-bit machines.
constexpr size_t kMaxStringLen = 512;

inline FormatOutcome runFormat(std::string_view fmt, std::initializer_list<FmtArg> args,
                               bool sprint, size_t cap, const SondeMemoryReader *memory = nullptr) {
  format::ParsedFormat parsed = format::parseFormat(fmt);
  EXPECT_TRUE(parsed.ok()) << fmt;
  EXPECT_EQ(parsed.argCount(), args.size()) << fmt;
  std::vector<SondeFormatArg> values;
  for (const FmtArg &a : args)
    values.push_back(a.a);
  const SondeFormatSpec spec{fmt.data(), parsed.items.data(),
                             static_cast<uint32_t>(parsed.items.size()), parsed.argCount()};
  std::string out(cap, '\x7e');
  SondeFormatError error;
  const size_t n = sprint
                       ? sonde_format_sprint(&spec, values.data(), out.data(), cap, memory, &error)
                       : sonde_format_print(&spec, values.data(), out.data(), cap, memory, &error);
  FormatOutcome outcome;
  if (sprint) {
    EXPECT_EQ(out[n], '\0') << fmt;
    EXPECT_LT(n, cap) << fmt;
  } else {
    EXPECT_LE(n, cap) << fmt;
  }
  outcome.text = out.substr(0, n);
  if (error.message != nullptr)
    outcome.error = error.message;
  return outcome;
}

// sprintf into MAXSTRINGLEN bytes.
inline std::string sprintfText(std::string_view fmt, std::initializer_list<FmtArg> args,
                               size_t cap = kMaxStringLen) {
  return runFormat(fmt, args, true, cap).text;
}

// printf into a stream buffer of stap's print size.
inline std::string printfText(std::string_view fmt, std::initializer_list<FmtArg> args,
                              size_t cap = SONDE_PRINT_BUFFER_SIZE) {
  return runFormat(fmt, args, false, cap).text;
}

} // namespace sonde::test
