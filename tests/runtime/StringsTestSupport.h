// Helpers for the string built-in tests: call a function that fills a
// MAXSTRINGLEN buffer and check it kept its contract (NUL, length).
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <string>

namespace sonde::test {

template <typename F> std::string stringResult(F f, size_t cap = 512) {
  std::string out(cap, '\x7e');
  const size_t n = f(out.data(), cap);
  EXPECT_LT(n, cap);
  EXPECT_EQ(out[n], '\0');
  EXPECT_EQ(std::strlen(out.c_str()), n);
  return out.substr(0, n);
}

} // namespace sonde::test
