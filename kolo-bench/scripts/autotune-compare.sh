#!/usr/bin/env bash
# Default engine settings vs KOLO_AUTOTUNE=1 on the synthetic training benchmark, taking turns job by job so that
# the machine's drift reaches both alike. Prints a table and writes JSON (and each autotune CSV) under the output dir.
#
#   kolo-bench/scripts/autotune-compare.sh [-np N] [--rounds R] [--out DIR] -- [synthetic options, e.g. --model mlp-deep]
#
# Each autotuned job tunes during the benchmark's warm-up batches (KOLO_AUTOTUNE_* below, small enough to finish
# there) and is measured afterwards with the settings it chose, as the default job is with the defaults.
set -euo pipefail
cd "$(dirname "$0")/../.."
np=2
rounds=3
out=target/autotune-compare
usage() {
  echo "autotune-compare: $1 (options: -np N, --rounds R, --out DIR, -- synthetic options)" >&2
  exit 2
}
while [ $# -gt 0 ]; do
  case "$1" in
    -np|--rounds|--out) [ $# -ge 2 ] && [ "$2" != "--" ] || usage "$1 needs a value" ;;
  esac
  case "$1" in
    -np) np="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --) shift; break ;;
    *) usage "unknown option $1" ;;
  esac
done
[[ "$np" =~ ^[1-9][0-9]*$ ]] || usage "-np needs a whole number >= 1, not '$np'"
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || usage "--rounds needs a whole number >= 1, not '$rounds'"
mkdir -p "$out"
# Runs a job with its output in LOG; a job that fails is the only one that can say why, so show the end of LOG.
job() {
  local log="$1"
  shift
  "$@" > "$log" 2>&1 || {
    local code=$?
    echo "autotune-compare: a job failed (exit code $code); the end of $log:" >&2
    tail -n 5 "$log" >&2
    exit "$code"
  }
}
args=("$@")
: "${KOLO_AUTOTUNE_WARMUP_SAMPLES:=1}" "${KOLO_AUTOTUNE_STEPS_PER_SAMPLE:=3}" "${KOLO_AUTOTUNE_BAYES_OPT_MAX_SAMPLES:=12}"
export KOLO_AUTOTUNE_WARMUP_SAMPLES KOLO_AUTOTUNE_STEPS_PER_SAMPLE KOLO_AUTOTUNE_BAYES_OPT_MAX_SAMPLES

total() { sed -n 's/^.*Total img\/sec on [0-9]* rank(s): \([0-9.]*\).*$/\1/p' "$1" | tail -1; }
json="$out/autotune-compare.json"
echo "{\"np\": $np, \"args\": \"${args[*]}\", \"rounds\": [" > "$json"
printf '%-6s %-22s %-22s %s\n' round "default img/sec" "autotuned img/sec" "chosen settings"
for r in $(seq 1 "$rounds"); do
  job "$out/default-$r.log" ./kolo run -np "$np" --example synthetic -- "${args[@]}"
  job "$out/autotuned-$r.log" ./kolo run -np "$np" --autotune --autotune-log-file "$PWD/$out/autotune-$r.csv" \
      --example synthetic -- "${args[@]}"
  d=$(total "$out/default-$r.log"); a=$(total "$out/autotuned-$r.log")
  chosen=$(grep -h '^# Kolo autotune chose' "$out/autotune-$r.csv" | sed 's/^# Kolo autotune chose //' || true)
  [ -n "$chosen" ] || chosen="(still tuning when measured: raise --num-warmup-batches)"
  printf '%-6s %-22s %-22s %s\n' "$r" "${d:-?}" "${a:-?}" "$chosen"
  [ "$r" = 1 ] || echo "," >> "$json"
  echo "{\"round\": $r, \"default\": ${d:-null}, \"autotuned\": ${a:-null}, \"chosen\": \"$chosen\"}" >> "$json"
done
echo "]}" >> "$json"
echo "JSON: $json"
