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
usage() {
  echo "heap-vs-native: $1 (options: --collective C, --rounds R, --out DIR, -- kolo bench options)" >&2
  exit 2
}
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds|--out|--collective) [ $# -ge 2 ] && [ "$2" != "--" ] || usage "$1 needs a value" ;;
  esac
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --collective) collective="$2"; shift 2 ;;
    --) shift; break ;;
    *) usage "unknown option $1" ;;
  esac
done
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || usage "--rounds needs a whole number >= 1, not '$rounds'"
case "$collective" in
  allreduce|allgather|broadcast|alltoall|reducescatter) ;;
  *) usage "--collective $collective: use allreduce, allgather, broadcast, alltoall or reducescatter" ;;
esac
mkdir -p "$out"
for r in $(seq 1 "$rounds"); do
  for memory in native heap; do
    echo "heap-vs-native: round $r of $rounds, $memory..." >&2
    # kolo bench's own words go to the log: on failure they are the only explanation, so show them.
    ./kolo bench "$collective" "$@" --memory "$memory" --json "$out/$memory-$r.json" > "$out/$memory-$r.txt" \
        2> "$out/$memory-$r.log" || {
      code=$?
      echo "heap-vs-native: kolo bench failed (exit code $code); the end of $out/$memory-$r.log:" >&2
      tail -n 5 "$out/$memory-$r.log" >&2
      exit "$code"
    }
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
