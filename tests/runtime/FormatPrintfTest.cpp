// printf/sprintf conversions. Expected strings follow stap's runtime
// (runtime/vsprintf.c driven by translate.cxx's compiled printf). Those marked
// [stap-ref] were also printed by /work/shared/tools/stap-ref; stap's BPF runtime
// formats longs as 32-bit C ints and glibc-style, so the rest come from the
// kernel runtime's code, which sonde follows (language.md §5: %u of -1 is
// 18446744073709551615).
#include "FormatTestSupport.h"

#include <gtest/gtest.h>

#include <climits>
#include <string>

using sonde::test::printfText;
using sonde::test::sprintfText;

namespace {

TEST(FormatPrintf, TheBriefsLine) {
  // [stap-ref] for everything but %u, which the BPF runtime prints as 4294967295.
  EXPECT_EQ(sprintfText("[%-5d][%05d][%+d][% d][%#x][%#o][%5.2s][%c][%u]\n",
                        {42, 42, 42, 42, 255, 8, "abc", 65, -1}),
            "[42   ][00042][+42][ 42][0xff][010][   ab][A][18446744073709551615]\n");
}

TEST(FormatPrintf, StapRefAgreesOnWidthsAndBases) {
  // [stap-ref]
  EXPECT_EQ(sprintfText("[%X][%o][%5.3d][%+5d][%x][% 5d][%%][%-6s|][%3s]",
                        {48879, 64, 7, 7, 255, -42, "ab", "abcdef"}),
            "[BEEF][100][  007][   +7][ff][  -42][%][ab    |][abcdef]");
  EXPECT_EQ(sprintfText("[%-08d][%.3d][%#08x][%-5s][%5s][%.2s][%5c][%-3c|]",
                        {42, 5, 255, "ab", "ab", "abc", 67, 68}),
            "[42      ][005][0x0000ff][ab   ][   ab][ab][    C][D  |]");
}

TEST(FormatPrintf, SixtyFourBitExtremes) {
  EXPECT_EQ(sprintfText("%d", {LLONG_MIN}), "-9223372036854775808");
  EXPECT_EQ(sprintfText("%d", {LLONG_MAX}), "9223372036854775807");
  EXPECT_EQ(sprintfText("%i", {-1}), "-1");
  EXPECT_EQ(sprintfText("%u", {LLONG_MIN}), "9223372036854775808");
  EXPECT_EQ(sprintfText("%x", {-1}), "ffffffffffffffff");
  EXPECT_EQ(sprintfText("%X", {LLONG_MIN}), "8000000000000000");
  EXPECT_EQ(sprintfText("%o", {-1}), "1777777777777777777777");
  EXPECT_EQ(sprintfText("%+d|% d", {LLONG_MIN, LLONG_MIN}),
            "-9223372036854775808|-9223372036854775808");
  EXPECT_EQ(sprintfText("%25d|%-25d|", {LLONG_MIN, LLONG_MIN}),
            "     -9223372036854775808|-9223372036854775808     |");
}

TEST(FormatPrintf, KernelNumberQuirks) {
  // stap's number() keeps quirks the kernel's vsprintf later dropped.
  EXPECT_EQ(sprintfText("%#o", {0}), "00");
  EXPECT_EQ(sprintfText("%#x", {0}), "0x0");
  EXPECT_EQ(sprintfText("%#X", {255}), "0XFF");
  EXPECT_EQ(sprintfText("%.0d", {0}), "0");                  // a zero precision still prints "0"
  EXPECT_EQ(sprintfText("%08.3d", {5}), "00000005");         // '0' pads despite a precision
  EXPECT_EQ(sprintfText("%+u|%+x|% o", {5, 5, 5}), "5|5|5"); // signs only for %d %i
  EXPECT_EQ(sprintfText("%05d|% 05d|%+05d", {-42, 42, 42}), "-0042| 0042|+0042");
  EXPECT_EQ(sprintfText("%5.3d|%-6.3d|", {-7, -7}), " -007|-007  |");
  EXPECT_EQ(sprintfText("%#8x|%-#8x|%#08o", {255, 255, 8}), "    0xff|0xff    |00000010");
}

TEST(FormatPrintf, PointerIsHashHex) {
  EXPECT_EQ(sprintfText("%p", {0}), "0x0");
  EXPECT_EQ(sprintfText("%p", {4096}), "0x1000");
  EXPECT_EQ(sprintfText("%10p|%-10p|", {4096, 4096}), "    0x1000|0x1000    |");
  EXPECT_EQ(sprintfText("%p", {-1}), "0xffffffffffffffff");
}

TEST(FormatPrintf, Chars) {
  EXPECT_EQ(sprintfText("%c", {65}), "A");
  EXPECT_EQ(sprintfText("%c", {0x141}), "A"); // the low byte
  EXPECT_EQ(sprintfText("%#c|%#c|%#c|%#c", {9, 10, 39, 92}), "\\t|\\n|\\'|\\\\");
  EXPECT_EQ(sprintfText("%#c|%#c|%#c|%#c", {0, 127, 200, 27}), "\\000|\\177|\\310|\\033");
  EXPECT_EQ(sprintfText("%#c%#c", {'"', 'x'}), "\"x"); // '"' is printable
  EXPECT_EQ(sprintfText("[%#5c][%-#6c]", {10, 1}), "[   \\n][\\001  ]");
  EXPECT_EQ(sprintfText("[%05c]", {'z'}), "[    z]"); // no zero padding for %c
  EXPECT_EQ(printfText("%c|", {0}), std::string("\0|", 2));
}

TEST(FormatPrintf, Strings) {
  EXPECT_EQ(sprintfText("%s", {""}), "");
  EXPECT_EQ(sprintfText("[%5.2s][%-5.2s][%.10s]", {"abc", "abc", "abc"}), "[   ab][ab   ][abc]");
  EXPECT_EQ(sprintfText("[%.0s]", {"abc"}), "[]");
  EXPECT_EQ(sprintfText("[%#s]", {"a\tb"}), "[a\tb]"); // '#' does nothing for %s
  // stap's %0s ends the field with a NUL byte: a string stops there, a stream keeps it.
  EXPECT_EQ(sprintfText("%05s|", {"ab"}), "   ab");
  EXPECT_EQ(printfText("%05s|", {"ab"}), std::string("   ab\0|", 7));
}

TEST(FormatPrintf, StarWidthAndPrecision) {
  EXPECT_EQ(sprintfText("[%*d][%-*d][%.*d][%*.*s]", {6, 42, 6, 42, 3, 7, 5, 2, "xyz"}),
            "[    42][42    ][007][   xy]");
  // stap clamps the (int) value to [0, room]: no left-justifying negative widths.
  EXPECT_EQ(sprintfText("[%*d][%.*s]", {-6, 42, -1, "abc"}), "[42][]");
  // The long is cast to int first: 2^32 + 6 is 6.
  EXPECT_EQ(sprintfText("[%*d]", {4294967302LL, 42}), "[    42]");
}

TEST(FormatPrintf, PercentAndLiterals) {
  EXPECT_EQ(sprintfText("100%% of %s%%", {"x"}), "100% of x%");
  EXPECT_EQ(sprintfText("no conversions\n", {}), "no conversions\n");
}

TEST(FormatPrintf, BinaryWritesHostOrderBytes) {
  EXPECT_EQ(printfText("%b", {0x0807060504030201LL}), std::string("\1\2\3\4\5\6\7\10", 8));
  EXPECT_EQ(printfText("%1b%2b%4b", {0x41, 0x4342, 0x47464544}), "ABCDEFG");
  EXPECT_EQ(printfText("%.2b", {0x4142}), "BA");
  // An invalid width still pads; the size falls back to 8.
  EXPECT_EQ(printfText("%3b", {0x41}), std::string("A\0\0\0\0\0\0\0", 8));
  EXPECT_EQ(printfText("%10.2b|", {0x4142}), std::string(8, '\0') + "BA|");
  EXPECT_EQ(printfText("%-10.2b|", {0x4142}), "BA" + std::string(8, '\0') + "|");
}

TEST(FormatPrintf, BinaryPrecisionClampedToStapsReservation) {
  // stap reserves 4 bytes for "%1.7b%%|\n" (a 1-byte %b plus "%|\n"), then clamps
  // the 7 to the 4 bytes left, a valid size: the value fills the reservation.
  EXPECT_EQ(printfText("%1.7b%%|\n", {0x44434241}), "ABCD");
  // sprintf clamps to MAXSTRINGLEN instead: 7 stays invalid, the width's 1 wins.
  EXPECT_EQ(sprintfText("%1.7b%%|\n", {0x44434241}), "A%|\n");
}

TEST(FormatPrintf, SprintTruncatesToCapMinusOne) {
  EXPECT_EQ(sprintfText("%d", {123456789}, 8), "1234567");
  EXPECT_EQ(sprintfText("abc%sdef", {"XYZ"}, 6), "abcXY");
  EXPECT_EQ(sprintfText("%s", {"abc"}, 1), "");
  const std::string spaces(511, ' ');
  EXPECT_EQ(sprintfText("%600d", {1}), spaces);
  EXPECT_EQ(sprintfText("%-600d|", {1}), "1" + std::string(510, ' '));
}

TEST(FormatPrintf, PrintTruncatesToCap) {
  EXPECT_EQ(printfText("%d", {123456789}, 8), "12345678");
  EXPECT_EQ(printfText("%10000d", {1}), std::string(8191, ' ') + "1");
  EXPECT_EQ(printfText("%s|%s", {"ab", "cd"}, 4), "ab|c");
}

} // namespace
