// errno_str, ctime and the byte-order helpers (*_to_string and bytes_to_string
// are stdlib/units.probe, tested by tests/conformance/builtins).
#include "StringsTestSupport.h"
#include "runtime/strings/StringAbi.h"

#include <gtest/gtest.h>

#include <climits>
#include <string>

using sonde::test::stringResult;

namespace {

std::string errnoStr(int64_t e) {
  return stringResult([&](char *o, size_t c) { return sonde_str_errno_str(e, o, c); });
}

std::string ctimeOf(int64_t secs, const char **error = nullptr) {
  const char *err = nullptr;
  std::string text = stringResult([&](char *o, size_t c) {
    size_t n = 0;
    err = sonde_str_ctime(secs, o, c, &n);
    return n;
  });
  if (error != nullptr)
    *error = err;
  else
    EXPECT_EQ(err, nullptr) << secs;
  return text;
}

TEST(StringsConversions, ErrnoStr) {
  EXPECT_EQ(errnoStr(2), "ENOENT");
  EXPECT_EQ(errnoStr(-2), "ENOENT"); // the sign is ignored
  EXPECT_EQ(errnoStr(1), "EPERM");
  EXPECT_EQ(errnoStr(34), "ERANGE");
  EXPECT_EQ(errnoStr(11), "EAGAIN");
  EXPECT_EQ(errnoStr(35), "EDEADLK");
  EXPECT_EQ(errnoStr(95), "EOPNOTSUPP");
  EXPECT_EQ(errnoStr(-110), "ETIMEDOUT");
  EXPECT_EQ(errnoStr(131), "ENOTRECOVERABLE");
  // stap's list stops there: no name (the tapset returns "").
  EXPECT_EQ(errnoStr(132), "");
  EXPECT_EQ(errnoStr(0), "");
  EXPECT_EQ(errnoStr(3333), "");
  EXPECT_EQ(errnoStr(LLONG_MIN), "");
}

TEST(StringsConversions, CtimeMatchesAsctimeInUtc) {
  // Checked against Python's time.asctime(time.gmtime(secs)).
  EXPECT_EQ(ctimeOf(0), "Thu Jan  1 00:00:00 1970");
  EXPECT_EQ(ctimeOf(-1), "Wed Dec 31 23:59:59 1969");
  EXPECT_EQ(ctimeOf(86399), "Thu Jan  1 23:59:59 1970");
  EXPECT_EQ(ctimeOf(68256000), "Wed Mar  1 00:00:00 1972");
  EXPECT_EQ(ctimeOf(951782400), "Tue Feb 29 00:00:00 2000");
  EXPECT_EQ(ctimeOf(1700000000), "Tue Nov 14 22:13:20 2023");
  EXPECT_EQ(ctimeOf(INT32_MAX), "Tue Jan 19 03:14:07 2038");
  EXPECT_EQ(ctimeOf(INT32_MIN), "Fri Dec 13 20:45:52 1901");
}

TEST(StringsConversions, CtimeOutsideThirtyTwoBits) {
  const char *error = nullptr;
  EXPECT_EQ(ctimeOf(int64_t{INT32_MAX} + 1, &error), "");
  EXPECT_STREQ(error, "Time too far in the future to be converted");
  EXPECT_EQ(ctimeOf(int64_t{INT32_MIN} - 1, &error), "");
  EXPECT_STREQ(error, "Time too far in the past to be converted");
}

TEST(StringsConversions, ByteOrder) {
  EXPECT_EQ(sonde_str_htonl(1), 0x01000000);
  EXPECT_EQ(sonde_str_htons(1), 0x0100);
  EXPECT_EQ(sonde_str_htonll(1), 0x0100000000000000LL);
  EXPECT_EQ(sonde_str_htonl(-1), 0xffffffffLL); // zero-extended
  EXPECT_EQ(sonde_str_htonl(0x1122334455667788LL), 0x88776655LL);
  EXPECT_EQ(sonde_str_ntohs(0x1234), 0x3412);
  EXPECT_EQ(sonde_str_ntohl(0x01000000), 1);
  EXPECT_EQ(sonde_str_ntohll(sonde_str_htonll(0x0123456789abcdefLL)), 0x0123456789abcdefLL);
}

} // namespace
