#!/usr/bin/env bash
# Kolo on Java arrays vs Kolo on native memory (kolo bench --memory heap|native), taking turns run by run so that the
# machine's drift reaches both alike. Per size: the median of each run's median, and heap / native (1.00 = as fast).
#
#   kolo-bench/scripts/heap-vs-native.sh [--collective C] [--rounds R] [--out DIR] -- [kolo bench options, e.g. -np 2 --sizes 1KiB..64MiB:4 --dtype f64]
#
# --collective: allreduce (default), allgather, broadcast, alltoall or reducescatter.
set -euo pipefail
cd "$(dirname "$0")/../.."
rounds=3
collective=allreduce
out=target/heap-vs-native
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --collective) collective="$2"; shift 2 ;;
    --) shift; break ;;
    *) echo "heap-vs-native: unknown option $1 (options: --collective C, --rounds R, --out DIR, -- kolo bench options)" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
for r in $(seq 1 "$rounds"); do
  for memory in native heap; do
    echo "heap-vs-native: round $r of $rounds, $memory..." >&2
    ./kolo bench "$collective" "$@" --memory "$memory" --json "$out/$memory-$r.json" > "$out/$memory-$r.txt" 2> "$out/$memory-$r.log"
  done
done
# Table rows of kolo bench: size iters avg min median max algbw busbw.
awk '
  FNR == 1 { split(FILENAME, p, "/"); kind = (p[length(p)] ~ /^heap/) ? "heap" : "native" }
  $1 ~ /^[0-9]+(B|KiB|MiB|GiB)$/ && NF == 8 {
    if (!($1 in seen)) { seen[$1] = 1; order[++n] = $1 }
    v[kind, $1, ++c[kind, $1]] = $5
  }
  function median(kind, size,   k, i, j, t, a) {
    k = c[kind, size]
    for (i = 1; i <= k; i++) a[i] = v[kind, size, i]
    for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
  }
  END {
    printf "%8s %16s %16s %12s\n", "size", "native median us", "heap median us", "heap/native"
    for (i = 1; i <= n; i++) {
      s = order[i]; h = median("heap", s); nm = median("native", s)
      printf "%8s %16.1f %16.1f %12.2f\n", s, nm, h, h / nm
    }
  }' "$out"/native-*.txt "$out"/heap-*.txt | tee "$out/summary.txt"
echo "runs and JSON: $out" >&2
