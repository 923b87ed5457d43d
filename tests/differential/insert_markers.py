"""Inserts stock <sys/sdt.h> markers into a csmith program at random statements.

Each marker K is a compound statement placed after a complete statement line
inside a function body:

    { __sonde_hits[K]++; __sonde_sum[K] += (long long)(V); DTRACE_PROBE2(csm, hit, K, V); }

(DTRACE_PROBE1(csm, hit, K) without V). V is a scalar integer of at most 32 bits
in scope there (a local declared with an initializer in an enclosing block, or
a global), so the program's own sum of V per marker is exact in 64 bits. A
destructor writes `K hits sum` for every marker to the file named by
$SONDE_CSM_COUNTS, so the expected counts come from the untraced run itself.
"""

import random
import re

_STRING = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'')
_COMMENT = re.compile(r"/\*.*?\*/")
# `int32_t l_5 = ...;` (locals) and `static uint8_t g_51 = ...;` (globals):
# scalars only (no `*`, no `[`), not volatile, with an initializer.
_SMALL_INT = r"(?:u?int(?:8|16|32)_t)"
_LOCAL_DECL = re.compile(r"^\s*(?:const\s+)?" + _SMALL_INT + r"\s+(l_\d+)\s*=")
_GLOBAL_DECL = re.compile(r"^static\s+(?:const\s+)?" + _SMALL_INT + r"\s+(g_\d+)\s*=")

PRELUDE = """#include <stdio.h>
#include <stdlib.h>
#include <sys/sdt.h>
static unsigned long long __sonde_hits[{n}];
static long long __sonde_sum[{n}];
__attribute__((destructor)) static void __sonde_write_counts(void) {{
  const char *path = getenv("SONDE_CSM_COUNTS");
  FILE *f = path ? fopen(path, "w") : NULL;
  if (!f) return;
  for (int k = 0; k < {n}; k++)
    fprintf(f, "%d %llu %lld\\n", k, __sonde_hits[k], __sonde_sum[k]);
  fclose(f);
}}
"""


def _code(line):
    """The line without string literals and comments (for braces and `;`)."""
    return _COMMENT.sub("", _STRING.sub('""', line)).strip()


def _candidates(lines):
    """(index of a statement line to insert after, variables in scope there).

    A candidate ends with `;` inside a function body and follows a line ending
    with `;`, `{` or `}`: a statement of a braced block, never the unbraced body
    of an if/for/else (inserting after that could split an if from its else)
    nor a for(...) header."""
    found = []
    globals_ = []
    depth = 0
    in_function = False
    scopes = []  # the locals declared in each open block of the function
    previous = ""
    for index, line in enumerate(lines):
        code = _code(line)
        if depth == 0:
            match = _GLOBAL_DECL.match(line)
            if match:
                globals_.append(match.group(1))
            if code.startswith("{"):
                in_function = True
        for ch in code:
            if ch == "{":
                depth += 1
                if in_function:
                    scopes.append([])
            elif ch == "}":
                depth -= 1
                if in_function and scopes:
                    scopes.pop()
        if in_function and depth == 0:
            in_function = False
            scopes = []
        if in_function and depth > 0:
            match = _LOCAL_DECL.match(line)
            if match and scopes:
                scopes[-1].append(match.group(1))
            if code.endswith(";") and previous[-1:] in (";", "{", "}"):
                in_scope = [v for scope in scopes for v in scope] + globals_
                found.append((index, in_scope))
        if code:
            previous = code
    return found


def instrument(source, seed, markers):
    """The csmith program `source` with up to `markers` markers, chosen by `seed`;
    returns (text, number of markers)."""
    rng = random.Random(seed)
    lines = source.split("\n")
    candidates = _candidates(lines)
    chosen = sorted(rng.sample(candidates, min(markers, len(candidates))))
    inserted = {}
    for k, (index, in_scope) in enumerate(chosen):
        if in_scope and rng.random() < 0.7:
            value = rng.choice(in_scope)
            inserted[index] = (
                f"{{ __sonde_hits[{k}]++; __sonde_sum[{k}] += (long long)({value}); "
                f"DTRACE_PROBE2(csm, hit, {k}, {value}); }}"
            )
        else:
            inserted[index] = f"{{ __sonde_hits[{k}]++; DTRACE_PROBE1(csm, hit, {k}); }}"
    out = [PRELUDE.format(n=max(len(chosen), 1))]
    for index, line in enumerate(lines):
        out.append(line)
        if index in inserted:
            out.append(inserted[index])
    return "\n".join(out), len(chosen)
