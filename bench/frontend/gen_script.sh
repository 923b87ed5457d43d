#!/usr/bin/env bash
# gen_script.sh LINES: print a realistic probe script of about LINES lines:
# globals of every kind, functions calling each other, timer and marker probes
# with loops, foreach, aggregates, printf and string work.
set -euo pipefail
lines=${1:-5000}
blocks=$(( (lines - 6) / 22 ))
echo "global counts[4096], names[4096], lat, total, last_name"
for ((i = 0; i < blocks; i++)); do
  cat <<EOS
function helper_$i:long (x:long, s:string) {
  n = strlen(s) + x * $i
  if (n % 7 == 3) n -= 1; else n += helper_${i}_leaf(n)
  for (j = 0; j < 3; j++) n += j << 2
  return n
}
function helper_${i}_leaf:long (v) { return v & 0xff }
probe timer.ms($(( i % 50 + 1 ))) {
  k = helper_$i(total, "blk$i")
  counts[k % 100, "k$i"] += 1
  names[k] = sprintf("%s-%d", execname(), k)
  lat <<< k
  total++
  last_name = names[k] . "/$i"
  try {
    if (k == 0) error("zero")
  } catch (msg) {
    warn(msg)
  }
  foreach ([a, b] in counts- limit 3)
    printf("%d %s %d\n", a, b, counts[a, b])
}
EOS
done
cat <<'EOS'
probe end {
  printf("total=%d avg=%d\n", total, @avg(lat))
  print(@hist_log(lat))
  println(last_name)
}
EOS
