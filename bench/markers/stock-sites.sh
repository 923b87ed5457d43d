#!/usr/bin/env bash
# Stock <sys/sdt.h> sites of real binaries (issue 21): how many StockSiteAnalysis
# puts on the jump path and why the others must stay a trap. Not a timing:
# the analysis is what sonde decides from the files' machine code, so the
# table only changes with the analysis or the binaries. Runs build/bench/stock_sites
# ($STOCK_SITES overrides; bench/markers/stock_sites.cpp) over $STOCK_SITE_BINARIES
# (python3.11, libstdc++, postgresql-15's postgres; missing ones are named and
# skipped) and writes the stock-sites section of bench/reports/markers.md: per
# binary the counts and refusals, then every refused site with its reason.
set -euo pipefail
source "$(dirname "$0")/../common.sh"
source "$(dirname "$0")/lib.sh"
tool=$(readlink -f "${STOCK_SITES:-$top/build/bench/stock_sites}")
binaries=${STOCK_SITE_BINARIES:-/usr/bin/python3.11 /usr/lib/x86_64-linux-gnu/libstdc++.so.6 /usr/lib/postgresql/15/bin/postgres}
[ -x "$tool" ] || { echo "stock-sites.sh: $tool not built (ninja -C build stock_sites)" >&2; exit 1; }

present=()
missing=()
for b in $binaries; do
  if [ -f "$b" ]; then present+=("$b"); else missing+=("$b"); fi
done
"$tool" "${present[@]}" > "$tmp/sites.tsv"

section=$tmp/section.md
{
  echo "## Stock sys/sdt.h sites: jump path or trap (issue 21)"
  echo
  echo "Run $(date -u '+%F %H:%M UTC'), commit $(git -C "$top" rev-parse --short HEAD)$(git -C "$top" diff --quiet HEAD -- 2> /dev/null || echo ' + uncommitted changes'),"
  echo "\`bench/markers/stock-sites.sh\`: the table is what StockSiteAnalysis"
  echo "(compiler/codegen/README.md) decides for each site; a refused site stays on the trap path."
  echo
  echo "| binary | sites | jump-eligible | trapped | jump % | refusals |"
  echo "|---|---:|---:|---:|---:|---|"
  awk -F'\t' '
    { file[$1] = 1; total[$1]++ }
    $5 == "jump" { jump[$1]++ }
    $5 == "trap" { trap[$1]++; reason[$1 SUBSEP $6]++ }
    END {
      n = 0
      for (f in file) order[++n] = f
      for (i = 1; i <= n; i++) {
        f = order[i]; why = ""
        for (k in reason) { split(k, p, SUBSEP); if (p[1] == f) why = why (why == "" ? "" : ", ") p[2] ": " reason[k] }
        printf "| `%s` | %d | %d | %d | %.0f %% | %s |\n", f, total[f], jump[f], trap[f], 100 * jump[f] / total[f], why == "" ? "none" : why
      }
    }' "$tmp/sites.tsv" | sort
  for b in "${missing[@]}"; do echo "| \`$b\` | not on this machine | | | | |"; done
  echo
  echo "Refused sites (function start as the FDE or symbol gives it):"
  echo
  echo "| binary | pc | marker | function | refusal | why |"
  echo "|---|---|---|---|---|---|"
  awk -F'\t' '$5 == "trap" { n = split($1, path, "/"); printf "| %s | %s | %s | %s | %s | %s |\n", path[n], $2, $3, $4, $6, $7 }' "$tmp/sites.tsv"
  echo
  echo "Displaced regions by length (jump-eligible sites):"
  echo
  awk -F'\t' '$5 == "jump" { len[$6]++ } END { for (l in len) printf "%d bytes: %d sites\n", l, len[l] }' "$tmp/sites.tsv" |
    sort -n | sed 's/^/- /'
} > "$section"
cat "$section"
write_section stock-sites "$section"
