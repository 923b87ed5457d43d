#!/usr/bin/env python3
"""Differential test of stock <sys/sdt.h> markers: csmith programs with markers
at random statements, built by each compiler at each optimisation level, run
untraced and under sonde counting hits per marker.

For every build: the traced run's stdout (csmith's checksum) and exit status
equal the untraced run's, and sonde's hits and sum of the second argument per
marker equal the program's own counters exactly. Deterministic by seed.

Exit status: 0 all identical, 1 a mismatch (each printed with its seed,
compiler, flags and the diff), 77 csmith is not installed.
"""

import argparse
import concurrent.futures
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from insert_markers import instrument  # noqa: E402

SKIP = 77
CSMITH_INCLUDE = "/usr/include/csmith"
# Small programs that terminate quickly; no goto (a jump past a declaration
# would leave a marker's argument uninitialised).
CSMITH_OPTIONS = [
    "--max-funcs", "6", "--max-block-depth", "4", "--max-expr-complexity", "6",
    "--max-array-dim", "2", "--max-array-len-per-dim", "5",
    "--no-jumps", "--no-packed-struct", "--no-bitfields", "--no-float",
]
MARKERS = 120
UNTRACED_LIMIT_S = 1.0
HITS_BUDGET = 20000
ATTEMPTS = 20
RUN_TIMEOUT_S = 60
SCRIPT = """global hits, sums
probe process("{prog}").provider("csm").mark("hit") {{
  hits[$arg1]++
  if (@defined($arg2)) sums[$arg1] += $arg2
}}
probe end {{ foreach (k in hits) printf("%d %d %d\\n", k, hits[k], sums[k]) }}
"""


class Program:
    def __init__(self, seed, csmith_seed, source, markers, hits):
        self.seed, self.csmith_seed, self.source = seed, csmith_seed, source
        self.markers, self.hits = markers, hits


def compile_c(compiler, opt, source, exe):
    cmd = [compiler, f"-{opt}", "-w", "-I", CSMITH_INCLUDE, source, "-o", exe]
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{result.stderr[-2000:]}")


def run_untraced(exe, counts, timeout):
    env = dict(os.environ, SONDE_CSM_COUNTS=counts)
    start = time.monotonic()
    result = subprocess.run([exe], capture_output=True, text=True, env=env, timeout=timeout)
    return result, time.monotonic() - start


def read_counts(path):
    """{marker: (hits, sum)} for the markers that fired, from the program's file."""
    counts = {}
    with open(path) as f:
        for line in f:
            k, hits, total = (int(x) for x in line.split())
            if hits:
                counts[k] = (hits, total)
    return counts


def generate(seed, workdir):
    """The first csmith program for `seed` that builds, ends within the limit and
    fires between 1 and HITS_BUDGET markers (gcc -O0, the slowest build)."""
    for attempt in range(ATTEMPTS):
        csmith_seed = seed * 1000 + attempt
        raw = os.path.join(workdir, f"s{seed}.raw.c")
        # csmith writes a platform.info where it runs: a directory of its own
        # per seed, since the seeds are generated in parallel (two writing one
        # file made csmith fail).
        own = os.path.join(workdir, f"csmith-{seed}")
        os.makedirs(own, exist_ok=True)
        made = subprocess.run(["csmith", "--seed", str(csmith_seed), "-o", raw, *CSMITH_OPTIONS],
                              capture_output=True, text=True, cwd=own)
        if made.returncode != 0:
            raise RuntimeError(f"seed {seed}: csmith --seed {csmith_seed} failed "
                               f"(status {made.returncode}): {made.stderr.strip()}")
        with open(raw) as f:
            text, markers = instrument(f.read(), csmith_seed, MARKERS)
        source = os.path.join(workdir, f"s{seed}.c")
        with open(source, "w") as f:
            f.write(text)
        exe = os.path.join(workdir, f"s{seed}.probe")
        counts = os.path.join(workdir, f"s{seed}.probe.counts")
        try:
            compile_c("gcc", "O0", source, exe)
            result, seconds = run_untraced(exe, counts, UNTRACED_LIMIT_S)
        except subprocess.TimeoutExpired:
            continue
        if result.returncode != 0 or seconds > UNTRACED_LIMIT_S:
            continue
        total = sum(hits for hits, _ in read_counts(counts).values())
        if 1 <= total <= HITS_BUDGET:
            return Program(seed, csmith_seed, source, markers, total)
    raise RuntimeError(f"seed {seed}: no usable csmith program in {ATTEMPTS} attempts")


def check(program, compiler, opt, sonde, workdir):
    """None when the traced run equals the untraced one, else the report."""
    name = f"seed {program.seed} (csmith --seed {program.csmith_seed}) {compiler} -{opt}"
    exe = os.path.join(workdir, f"s{program.seed}_{os.path.basename(compiler)}_{opt}")
    try:
        problems, stderr = compare(program, compiler, opt, sonde, workdir, exe)
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as error:
        problems, stderr = [str(error)], ""
    if not problems:
        return None
    return (f"FAIL {name}: {program.markers} markers, source {program.source}\n  "
            + "\n  ".join(problems) + f"\n  sonde stderr: {stderr.strip()[-1500:]}")


def compare(program, compiler, opt, sonde, workdir, exe):
    """The differences between the untraced and the traced run of one build."""
    compile_c(compiler, opt, program.source, exe)
    counts = exe + ".counts"
    untraced, _ = run_untraced(exe, counts, RUN_TIMEOUT_S)
    expected = read_counts(counts)
    prog = "./" + os.path.basename(exe)
    script = exe + ".stp"
    with open(script, "w") as f:
        f.write(SCRIPT.format(prog=prog))
    out = exe + ".sonde.out"
    traced_counts = exe + ".traced.counts"
    env = dict(os.environ, SONDE_CSM_COUNTS=traced_counts)
    cmd = [sonde, "--target-status", "-o", out, script, "-c", prog]
    traced = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=workdir,
                            timeout=RUN_TIMEOUT_S)
    problems = []
    if traced.stdout != untraced.stdout:
        problems.append(f"stdout differs:\n  untraced: {untraced.stdout!r}\n"
                        f"  traced:   {traced.stdout!r}")
    if traced.returncode != untraced.returncode:
        problems.append(f"exit status: untraced {untraced.returncode}, "
                        f"traced {traced.returncode}")
    if not os.path.exists(traced_counts):
        problems.append("the traced program did not write its counters")
    elif read_counts(traced_counts) != expected:
        problems.append("the program's own counters differ between the runs")
    seen = {}
    if os.path.exists(out):
        with open(out) as f:
            for line in f:
                k, hits, total = (int(x) for x in line.split())
                seen[k] = (hits, total)
    wrong = [f"marker {k}: program (hits, sum) {expected.get(k)}, sonde {seen.get(k)}"
             for k in sorted(set(expected) | set(seen)) if expected.get(k) != seen.get(k)]
    problems += wrong[:10]
    if len(wrong) > 10:
        problems.append(f"... and {len(wrong) - 10} more markers")
    return problems, traced.stderr


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sonde", required=True)
    parser.add_argument("--seeds", default="1-10", help="FIRST-LAST")
    parser.add_argument("--compilers", default="gcc,clang-19")
    parser.add_argument("--opts", default="O0,O2")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--keep", help="work in this directory and keep it")
    args = parser.parse_args()
    if not shutil.which("csmith"):
        print("SKIP: csmith is not installed (scripts/setup.sh installs it)")
        return SKIP
    if not os.path.isdir(CSMITH_INCLUDE):
        print(f"SKIP: {CSMITH_INCLUDE} is missing (package libcsmith-dev)")
        return SKIP
    first, last = (int(x) for x in args.seeds.split("-"))
    workdir = args.keep or tempfile.mkdtemp(prefix="sonde-csmith-")
    os.makedirs(workdir, exist_ok=True)
    sonde = os.path.abspath(args.sonde)
    failures = []
    builds = 0
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        try:
            programs = list(pool.map(lambda s: generate(s, workdir), range(first, last + 1)))
        except RuntimeError as error:
            print(f"FAIL {error} (work directory {workdir})")
            return 1
        jobs = [(p, c, o) for p in programs for c in args.compilers.split(",")
                for o in args.opts.split(",")]
        for job, report in zip(jobs, pool.map(lambda j: check(*j, sonde, workdir), jobs)):
            builds += 1
            if report:
                failures.append(report)
                print(report, flush=True)
    print(f"{builds} builds of {len(programs)} csmith programs "
          f"({sum(p.markers for p in programs)} markers, {sum(p.hits for p in programs)} "
          f"events a build; compilers {args.compilers}; "
          f"flags {args.opts}): {builds - len(failures)} identical, {len(failures)} failed")
    if not failures and not args.keep:
        shutil.rmtree(workdir)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
