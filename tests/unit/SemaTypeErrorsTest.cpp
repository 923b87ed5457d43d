// Every pass-2 type error, with stap's exact wording and chained notes, as
// the driver renders it (stap -p2 prints the same for these scripts, except
// where a comment says otherwise).
#include "SemaTestSupport.h"

#include <gtest/gtest.h>

namespace sonde::test {
namespace {

TEST(SemaTypeErrors, MismatchChainsFirstInference) {
  EXPECT_EQ(semaDiagnostics(R"(global last
probe begin { last = user_string(0) }
probe timer.s(1) {
  last++
}
)"),
            R"(semantic error: type mismatch (string): identifier 'last' at input.probe:2:15
        source: probe begin { last = user_string(0) }
                              ^

semantic error: type was first inferred here (long): identifier 'last' at input.probe:4:3
        source:   last++
                  ^

)");
}

TEST(SemaTypeErrors, StatLocal) {
  EXPECT_EQ(semaDiagnostics(R"(probe begin { println(@count(x)) }
)"),
            R"(WARNING: never-assigned local variable 'x': identifier 'x' at input.probe:1:30
 source: probe begin { println(@count(x)) }
                                      ^
semantic error: stat locals not supported, missing global declaration? : identifier 'x' at input.probe:1:30
        source: probe begin { println(@count(x)) }
                                             ^

)");
}

// stap 4.8 prints the array's value type in the note; the index's is meant.
TEST(SemaTypeErrors, IndexMismatch) {
  EXPECT_EQ(semaDiagnostics(R"(global a
probe begin { a[1] = "x"; a["k"] = "y"; print(a[1]) }
)"),
            R"(semantic error: index 0 type mismatch (string): string 'k' at input.probe:2:29
        source: probe begin { a[1] = "x"; a["k"] = "y"; print(a[1]) }
                                            ^

semantic error: type of index 0 was first inferred here (long): number '1' at input.probe:2:17
        source: probe begin { a[1] = "x"; a["k"] = "y"; print(a[1]) }
                                ^

)");
}

TEST(SemaTypeErrors, ParameterMismatchCitesTheCall) {
  EXPECT_EQ(semaDiagnostics(R"(function f(x) { return x+1 }
probe begin { print(f("a")) }
)"),
            R"(semantic error: index 0 type mismatch (long): identifier 'x' at input.probe:1:24
        source: function f(x) { return x+1 }
                                       ^

semantic error: type of index 0 was first inferred here (string): string 'a' at input.probe:2:23
        source: probe begin { print(f("a")) }
                                      ^

)");
}

// stap words this one backwards ("expected long but found string").
TEST(SemaTypeErrors, DeclaredParameterMismatch) {
  EXPECT_EQ(
      semaDiagnostics(R"(function f:long(x:string) { return 1 }
probe begin { print(f(1)) }
)"),
      R"(semantic error: type mismatch: expected string but found long: number '1' at input.probe:2:23
        source: probe begin { print(f(1)) }
                                      ^

)");
}

TEST(SemaTypeErrors, ExpectedLong) {
  EXPECT_EQ(
      semaDiagnostics(R"(probe begin { print(1 + "a") }
)"),
      R"(semantic error: type mismatch: expected long but found string: string 'a' at input.probe:1:25
        source: probe begin { print(1 + "a") }
                                        ^

)");
}

TEST(SemaTypeErrors, LeftAndRightSides) {
  EXPECT_EQ(semaDiagnostics(R"(probe begin { x = 1; y = "a"; print(x == y) }
)"),
            R"(semantic error: type mismatch (long): identifier 'y' at input.probe:1:42
        source: probe begin { x = 1; y = "a"; print(x == y) }
                                                         ^

semantic error: type was first inferred here (string): identifier 'y' at input.probe:1:22
        source: probe begin { x = 1; y = "a"; print(x == y) }
                                     ^

)");
}

TEST(SemaTypeErrors, StatsAsNumber) {
  EXPECT_EQ(semaDiagnostics(R"(global s
probe begin { s <<< 1; print(s + 1) }
)"),
            R"(semantic error: type mismatch (long): identifier 's' at input.probe:2:30
        source: probe begin { s <<< 1; print(s + 1) }
                                             ^

semantic error: type was first inferred here (stats): identifier 's' at input.probe:2:15
        source: probe begin { s <<< 1; print(s + 1) }
                              ^

)");
}

// stap elides the dead assignment first and reports nothing here.
TEST(SemaTypeErrors, StatsAsValue) {
  EXPECT_EQ(semaDiagnostics(R"(global s
probe begin { s <<< 1; y = s; print(y) }
)"),
            R"(semantic error: invalid type stats: identifier 's' at input.probe:2:28
        source: probe begin { s <<< 1; y = s; print(y) }
                                           ^

semantic error: unresolved type : identifier 'y' at input.probe:2:37
        source: probe begin { s <<< 1; y = s; print(y) }
                                                    ^

)");
}

TEST(SemaTypeErrors, InvalidOperatorOnString) {
  EXPECT_EQ(
      semaDiagnostics(R"(probe begin { print(!"a") }
)"),
      R"(semantic error: type mismatch: expected long but found string: string 'a' at input.probe:1:22
        source: probe begin { print(!"a") }
                                     ^

)");
}

TEST(SemaTypeErrors, WrongNumberOfPrintfArgs) {
  EXPECT_EQ(
      semaDiagnostics(R"(probe begin { printf("%d %d\n", 1) }
)"),
      R"(semantic error: Wrong number of args to formatted print operator: identifier 'printf' at input.probe:1:15
        source: probe begin { printf("%d %d\n", 1) }
                              ^

)");
}

// stap shows only the first and counts the second as "similar".
TEST(SemaTypeErrors, PrintfConversionTypes) {
  EXPECT_EQ(
      semaDiagnostics(R"(probe begin { printf("%s|%*d\n", 1, "w", 2) }
)"),
      R"(semantic error: type mismatch: expected string but found long: number '1' at input.probe:1:34
        source: probe begin { printf("%s|%*d\n", 1, "w", 2) }
                                                 ^

semantic error: type mismatch: expected long but found string: string 'w' at input.probe:1:37
        source: probe begin { printf("%s|%*d\n", 1, "w", 2) }
                                                    ^

)");
}

TEST(SemaTypeErrors, VoidFunctionValue) {
  EXPECT_EQ(semaDiagnostics(R"(function f() { }
probe begin { x = f(); print(x) }
)"),
            R"(semantic error: unresolved type : identifier 'x' at input.probe:2:15
        source: probe begin { x = f(); print(x) }
                              ^

)");
}

TEST(SemaTypeErrors, VoidBuiltinValue) {
  EXPECT_EQ(semaDiagnostics(R"(probe begin { x = exit() }
)"),
            R"(semantic error: unresolved type : identifier 'x' at input.probe:1:15
        source: probe begin { x = exit() }
                              ^

)");
}

// stap words this one backwards ("expected string but found long").
TEST(SemaTypeErrors, InitializedGlobalMismatch) {
  EXPECT_EQ(
      semaDiagnostics(R"(global x = 1
probe begin { x = "a" }
)"),
      R"(semantic error: type mismatch: expected long but found string: identifier 'x' at input.probe:2:15
        source: probe begin { x = "a" }
                              ^

)");
}

TEST(SemaTypeErrors, MultipleHistogramTypes) {
  EXPECT_EQ(
      semaDiagnostics(R"(global x
probe begin { x <<< 1; print(@hist_log(x)); print(@hist_linear(x, 0, 10, 1)) }
)"),
      R"(semantic error: multiple histogram types declared on 'x': operator '@hist_linear' at input.probe:2:51
        source: probe begin { x <<< 1; print(@hist_log(x)); print(@hist_linear(x, 0, 10, 1)) }
                                                                  ^

)");
}

TEST(SemaTypeErrors, ConflictingBitShifts) {
  EXPECT_EQ(
      semaDiagnostics(R"(global x
probe begin { x <<< 1; print(@variance(x, 3)); print(@variance(x, 4)) }
)"),
      R"(semantic error: conflicting bit shifts declared (previously 3): operator '@variance' at input.probe:2:54
        source: probe begin { x <<< 1; print(@variance(x, 3)); print(@variance(x, 4)) }
                                                                     ^

)");
}

TEST(SemaTypeErrors, BitShiftOutOfRange) {
  EXPECT_EQ(
      semaDiagnostics(R"(global x
probe begin { x <<< 1; print(@variance(x, 63)) }
)"),
      R"(semantic error: bit shift (63) out of range <0..62>: operator '@variance' at input.probe:2:30
        source: probe begin { x <<< 1; print(@variance(x, 63)) }
                                             ^

)");
}

TEST(SemaTypeErrors, SpecificMismatchHidesSides) {
  EXPECT_EQ(
      semaDiagnostics(R"(probe begin { x = 1 + "a"; println(x) }
)"),
      R"(semantic error: type mismatch: expected long but found string: string 'a' at input.probe:1:23
        source: probe begin { x = 1 + "a"; println(x) }
                                      ^

)");
}

TEST(SemaTypeErrors, SidesDisagree) {
  EXPECT_EQ(
      semaDiagnostics(R"(probe begin { if ((1 + 2) == ("a" . "b")) println(1) }
)"),
      R"(semantic error: type mismatch: left and right sides don't agree (long vs string): operator '==' at input.probe:1:27
        source: probe begin { if ((1 + 2) == ("a" . "b")) println(1) }
                                          ^

)");
}

} // namespace
} // namespace sonde::test
