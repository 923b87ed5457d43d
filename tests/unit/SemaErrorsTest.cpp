// Every pass-2 name-resolution and structural error, with stap's exact wording and chained notes,
// as the driver renders it (stap -p2 prints the same for these scripts, except where a comment says
// otherwise).
#include "SemaTestSupport.h"

#include <gtest/gtest.h>

namespace sonde::test {
namespace {

TEST(SemaErrors, UnresolvedArrayNeedsGlobal) {
  EXPECT_EQ(
      semaDiagnostics(R"(probe begin { a[1] = 2 }
)"),
      R"(semantic error: unresolved arity-1 global array a, missing global declaration?: identifier 'a' at input.probe:1:15
        source: probe begin { a[1] = 2 }
                              ^

)");
}

TEST(SemaErrors, LocalUsedAsArray) {
  EXPECT_EQ(semaDiagnostics(R"(probe begin { x = 1; println(x[1]) }
)"),
            R"(semantic error: inconsistent arity (0 vs 1): identifier 'x' at input.probe:1:30
        source: probe begin { x = 1; println(x[1]) }
                                             ^

semantic error: arity 0 first inferred here: identifier 'x' at input.probe:1:15
        source: probe begin { x = 1; println(x[1]) }
                              ^

)");
}

TEST(SemaErrors, InconsistentArity) {
  EXPECT_EQ(semaDiagnostics(R"(global x
probe begin { x[1,2] = 1; print(x[1]) }
)"),
            R"(semantic error: inconsistent arity (2 vs 1): identifier 'x' at input.probe:2:33
        source: probe begin { x[1,2] = 1; print(x[1]) }
                                                ^

semantic error: arity 2 first inferred here: identifier 'x' at input.probe:2:15
        source: probe begin { x[1,2] = 1; print(x[1]) }
                              ^

)");
}

TEST(SemaErrors, SizedGlobalUsedAsScalar) {
  EXPECT_EQ(semaDiagnostics(R"(global x[10]
probe begin { x = 1 }
)"),
            R"(semantic error: inconsistent arity: identifier 'x' at input.probe:1:8
        source: global x[10]
                       ^

)");
}

TEST(SemaErrors, WrappedScalar) {
  EXPECT_EQ(semaDiagnostics(R"(global x%
probe begin { x = 1 }
)"),
            R"(semantic error: wrapping not supported for scalars: identifier 'x' at input.probe:1:8
        source: global x%
                       ^

)");
}

TEST(SemaErrors, UnresolvedArrayInDelete) {
  EXPECT_EQ(
      semaDiagnostics(R"(probe begin { delete a }
)"),
      R"(semantic error: unresolved array in delete statement: identifier 'a' at input.probe:1:22
        source: probe begin { delete a }
                                     ^

)");
}

TEST(SemaErrors, ProbewriteOutsideAlias) {
  EXPECT_EQ(semaDiagnostics(R"(probe begin { print(@probewrite(x)) }
)"),
            R"(semantic error: unexpected @probewrite: operator '@probewrite' at input.probe:1:21
        source: probe begin { print(@probewrite(x)) }
                                    ^

)");
}

TEST(SemaErrors, ModifiedDuringForeach) {
  EXPECT_EQ(
      semaDiagnostics(R"(global a
probe begin { a[1] = 1; foreach (k in a) a[k+1] = 2 }
)"),
      R"(semantic error: variable 'a' modified during 'foreach' iteration: identifier 'a' at input.probe:2:42
        source: probe begin { a[1] = 1; foreach (k in a) a[k+1] = 2 }
                                                         ^

)");
}

TEST(SemaErrors, DeletedDuringForeach) {
  EXPECT_EQ(
      semaDiagnostics(R"(global a
probe begin { a[1] = 1; foreach (k in a) delete a[k] }
)"),
      R"(semantic error: variable 'a' modified during 'foreach' iteration: identifier 'a' at input.probe:2:49
        source: probe begin { a[1] = 1; foreach (k in a) delete a[k] }
                                                                ^

)");
}

TEST(SemaErrors, AccumulatedDuringForeach) {
  EXPECT_EQ(
      semaDiagnostics(R"(global a
probe begin { a[1] <<< 1; foreach (k in a) a[k] <<< 2 }
)"),
      R"(semantic error: variable 'a' modified during 'foreach' iteration: identifier 'a' at input.probe:2:44
        source: probe begin { a[1] <<< 1; foreach (k in a) a[k] <<< 2 }
                                                           ^

)");
}

TEST(SemaErrors, CallModifiesDuringForeach) {
  EXPECT_EQ(
      semaDiagnostics(R"(global a
function g() { a[1] = 3 }
function h() { g() }
probe begin { a[1] = 1; foreach (k in a) h() }
)"),
      R"(semantic error: function call modifies var 'a' during 'foreach' iteration: identifier 'h' at input.probe:4:42
        source: probe begin { a[1] = 1; foreach (k in a) h() }
                                                         ^

)");
}

TEST(SemaErrors, ConditionUndeclaredGlobal) {
  EXPECT_EQ(
      semaDiagnostics(R"(probe begin if (x > 0) { print(1) }
)"),
      R"(semantic error: probe condition must not reference undeclared global: identifier 'x' at input.probe:1:17
        source: probe begin if (x > 0) { print(1) }
                                ^

)");
}

TEST(SemaErrors, ConditionModifies) {
  EXPECT_EQ(
      semaDiagnostics(R"(global x
probe begin if (x++) { print(1) }
)"),
      R"(semantic error: probe condition must not modify any variables: operator '++' at input.probe:2:18
        source: probe begin if (x++) { print(1) }
                                 ^

)");
}

TEST(SemaErrors, ConditionCallsFunction) {
  EXPECT_EQ(
      semaDiagnostics(R"(function f() { return 1 }
probe begin if (f()) { print(1) }
)"),
      R"(semantic error: probe condition must not reference function: identifier 'f' at input.probe:2:17
        source: probe begin if (f()) { print(1) }
                                ^

)");
}

// stap only notices this in pass 3; language.md asks for it in pass 2.
TEST(SemaErrors, BreakOutsideLoop) {
  EXPECT_EQ(semaDiagnostics(R"(probe begin { break }
)"),
            R"(semantic error: cannot 'break' outside loop: keyword at input.probe:1:15
        source: probe begin { break }
                              ^

)");
}

TEST(SemaErrors, ContinueOutsideLoop) {
  EXPECT_EQ(semaDiagnostics(R"(probe begin { continue }
)"),
            R"(semantic error: cannot 'continue' outside loop: keyword at input.probe:1:15
        source: probe begin { continue }
                              ^

)");
}

TEST(SemaErrors, WildcardIndex) {
  EXPECT_EQ(
      semaDiagnostics(R"(global a
probe begin { a[1] = 1; print(a[*]) }
)"),
      R"(semantic error: wildcard not allowed in array index: identifier 'a' at input.probe:2:31
        source: probe begin { a[1] = 1; print(a[*]) }
                                              ^

)");
}

// stap also shows the offending operand as a second location.
TEST(SemaErrors, NotAnLvalue) {
  EXPECT_EQ(semaDiagnostics(R"(probe begin { 1 = 2 }
)"),
            R"(semantic error: Expecting lvalue for assignment: operator '=' at input.probe:1:17
        source: probe begin { 1 = 2 }
                                ^

)");
}

TEST(SemaErrors, DotInsteadOfArrow) {
  EXPECT_EQ(
      semaDiagnostics(R"(global x
probe begin { x . y = 1; print(x) }
)"),
      R"(WARNING: never-assigned local variable 'y' (similar: x): identifier 'y' at input.probe:2:19
 source: probe begin { x . y = 1; print(x) }
                           ^
WARNING: never-assigned global variable 'x': identifier 'x' at input.probe:1:8
 source: global x
                ^
semantic error: Expecting lvalue for assignment, try -> instead: operator '=' at input.probe:2:21
        source: probe begin { x . y = 1; print(x) }
                                    ^

)");
}

// stap also shows the function's declaration as a second location.
TEST(SemaErrors, ArityMismatch) {
  EXPECT_EQ(
      semaDiagnostics(R"(function f(a, b) { return a }
probe begin { print(f(1)) }
)"),
      R"(semantic error: arity mismatch found (function 'f' takes 2 args): identifier 'f' at input.probe:2:21
        source: probe begin { print(f(1)) }
                                    ^

)");
}

TEST(SemaErrors, BuiltinArityMismatch) {
  EXPECT_EQ(
      semaDiagnostics(R"(probe begin { print(user_string()) }
)"),
      R"(semantic error: arity mismatch found (function 'user_string' takes 2 args): identifier 'user_string' at input.probe:1:21
        source: probe begin { print(user_string()) }
                                    ^

)");
}

TEST(SemaErrors, UnresolvedFunction) {
  EXPECT_EQ(
      semaDiagnostics(R"(probe begin { print(nosuchfn(1)) }
)"),
      R"(semantic error: unresolved function nosuchfn (similar: pn, min, HZ, cpu, pp): identifier 'nosuchfn' at input.probe:1:21
        source: probe begin { print(nosuchfn(1)) }
                                    ^

)");
}

// Hints come from similarNames(): stap's five closest names, however far. stap
// 4.8 (BPF tapset) lists "execname, cpu, pn, pp, regparm": its function set differs.
TEST(SemaErrors, UnresolvedFunctionSuggests) {
  EXPECT_EQ(
      semaDiagnostics(R"(probe begin { print(execnam()) }
)"),
      R"(semantic error: unresolved function execnam (similar: execname, pexecname, pid2execname, max, HZ): identifier 'execnam' at input.probe:1:21
        source: probe begin { print(execnam()) }
                                    ^

)");
}

// stap only fails in the C compiler here.
TEST(SemaErrors, TooManyIndexes) {
  EXPECT_EQ(semaDiagnostics(R"(global a
probe begin { a[1,2,3,4,5,6,7,8,9,10] = 1 }
)"),
            R"(semantic error: too many array indexes (max 9): identifier 'a' at input.probe:2:15
        source: probe begin { a[1,2,3,4,5,6,7,8,9,10] = 1 }
                              ^

)");
}

// stap adds an "unresolved type" for the same token.
TEST(SemaErrors, CastNotResolvable) {
  EXPECT_EQ(
      semaDiagnostics(R"(probe begin { print(@cast(0, "task_struct")->pid) }
)"),
      R"(semantic error: type definition 'task_struct' not found in '': operator '@cast' at input.probe:1:21
        source: probe begin { print(@cast(0, "task_struct")->pid) }
                                    ^

)");
}

TEST(SemaErrors, TargetVariableWithoutContext) {
  EXPECT_EQ(
      semaDiagnostics(R"(probe begin { println($x) }
)"),
      R"(semantic error: unresolved target-symbol expression: identifier '$x' at input.probe:1:23
        source: probe begin { println($x) }
                                      ^

)");
}

TEST(SemaErrors, TargetVariableInFunction) {
  EXPECT_EQ(
      semaDiagnostics(R"(function f() { return $x }
probe begin { println(f()) }
)"),
      R"(semantic error: unresolved target-symbol expression: identifier '$x' at input.probe:1:23
        source: function f() { return $x }
                                      ^

)");
}

TEST(SemaErrors, MarkerParameterWrite) {
  SKIP_WITHOUT_PYTHON_MARKERS();
  EXPECT_EQ(
      semaDiagnostics(R"(probe process("/usr/bin/python3.11").mark("gc__start") { $arg1 = 1 }
)"),
      R"(semantic error: write to marker parameter '$arg1' not permitted: identifier '$arg1' at input.probe:1:58
        source: probe process("/usr/bin/python3.11").mark("gc__start") { $arg1 = 1 }
                                                                         ^

)");
}

// stap 4.8 says "invalid operand of delete expression"; language.md lists this.
TEST(SemaErrors, DeleteOperand) {
  EXPECT_EQ(
      semaDiagnostics(R"(probe begin { delete 1 }
)"),
      R"(semantic error: Expecting symbol or array index expression: number '1' at input.probe:1:22
        source: probe begin { delete 1 }
                                     ^

)");
}

// stap also shows the bucket as a second location.
TEST(SemaErrors, HistogramBucketAssignment) {
  EXPECT_EQ(semaDiagnostics(R"(global h
probe begin { h <<< 1; @hist_log(h)[1] = 2 }
)"),
            R"(semantic error: Expecting lvalue for assignment: operator '=' at input.probe:2:40
        source: probe begin { h <<< 1; @hist_log(h)[1] = 2 }
                                                       ^

)");
}

// stap gives up on a statement at its first error; we report them all.
TEST(SemaErrors, SeveralErrorsInOneRun) {
  EXPECT_EQ(
      semaDiagnostics(R"(probe begin { a[1] = 1; b[2] = 2; break }
)"),
      R"(semantic error: unresolved arity-1 global array a, missing global declaration?: identifier 'a' at input.probe:1:15
        source: probe begin { a[1] = 1; b[2] = 2; break }
                              ^

semantic error: unresolved arity-1 global array b, missing global declaration?: identifier 'b' at input.probe:1:25
        source: probe begin { a[1] = 1; b[2] = 2; break }
                                        ^

semantic error: cannot 'break' outside loop: keyword at input.probe:1:35
        source: probe begin { a[1] = 1; b[2] = 2; break }
                                                  ^

)");
}

// Unused functions are dropped before anything looks inside them.
TEST(SemaErrors, ErrorsInUnusedFunctionsAreNotChecked) {
  EXPECT_EQ(semaDiagnostics(R"(function f() { return nosuch() }
probe begin { print(1) }
)"),
            R"(WARNING: Eliding unused function 'f': identifier 'f' at input.probe:1:10
 source: function f() { return nosuch() }
                  ^
)");
}

TEST(SemaErrors, HistogramBucketIncrement) {
  EXPECT_EQ(
      semaDiagnostics(R"(global h
probe begin { h <<< 1; @hist_log(h)[1]++ }
)"),
      R"(semantic error: cannot assign to histogram buckets: operator '@hist_log' at input.probe:2:24
        source: probe begin { h <<< 1; @hist_log(h)[1]++ }
                                       ^

)");
}

TEST(SemaErrors, HistogramBucketDelete) {
  EXPECT_EQ(
      semaDiagnostics(R"(global h
probe begin { h <<< 1; delete @hist_log(h)[1] }
)"),
      R"(semantic error: cannot delete histogram bucket entries: operator '@hist_log' at input.probe:2:31
        source: probe begin { h <<< 1; delete @hist_log(h)[1] }
                                              ^

)");
}

TEST(SemaErrors, LvalueErrorsFollowWarnings) {
  SKIP_WITHOUT_PYTHON_MARKERS();
  EXPECT_EQ(
      semaDiagnostics(R"(probe process("/usr/bin/python3.11").mark("gc__start") { $arg1.field = 3 }
)"),
      R"(WARNING: never-assigned local variable 'field': identifier 'field' at input.probe:1:64
 source: probe process("/usr/bin/python3.11").mark("gc__start") { $arg1.field = 3 }
                                                                        ^
semantic error: Expecting lvalue for assignment, try -> instead: operator '=' at input.probe:1:70
        source: probe process("/usr/bin/python3.11").mark("gc__start") { $arg1.field = 3 }
                                                                                     ^

)");
}

} // namespace
} // namespace sonde::test
