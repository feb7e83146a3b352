#!/usr/bin/env bash
# Where a DJL training step's gradient averaging goes: runs the synthetic example with rank 0's timeline, then
# kolo bench allreduce on the same bytes from native memory, and adds both to a results JSON under a label
# (AveragingBreakdown.java says how the timeline is read). Run it for two builds (--kolo-home) or settings (-x, passed
# to both) in turns to compare them.
#
#   kolo-bench/scripts/averaging-breakdown.sh [--runs N] [--label L] [--out FILE] [--kolo-home DIR] [--skip S]
#                                             [-x VAR=VALUE]...
#                                             -- [synthetic example options, e.g. --model resnet18 --batch-size 32]
#
# Defaults: 1 run, label "this build", docs/results/averaging-breakdown.json, this checkout, 2 warm-up steps skipped.
set -euo pipefail
cd "$(dirname "$0")/../.."
here="$PWD"
runs=1
label="this build"
out="$here/docs/results/averaging-breakdown.json"
home="$here"
skip=2
extra=()
usage() {
  echo "averaging-breakdown: $1 (options: --runs N, --label L, --out FILE, --kolo-home DIR, --skip S, -x VAR=VALUE, -- example options)" >&2
  exit 2
}
while [ $# -gt 0 ]; do
  case "$1" in
    --runs|--label|--out|--kolo-home|--skip|-x) [ $# -ge 2 ] && [ "$2" != "--" ] || usage "$1 needs a value" ;;
  esac
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --label) label="$2"; shift 2 ;;
    --out) out="$(realpath -m "$2")"; shift 2 ;;
    --kolo-home) [ -x "$2/kolo" ] || usage "--kolo-home $2 is not a Kolo checkout (no kolo script in it)"
      home="$(realpath "$2")"; shift 2 ;;
    --skip) skip="$2"; shift 2 ;;
    -x) extra+=(-x "$2"); shift 2 ;;
    --) shift; break ;;
    *) usage "unknown option $1" ;;
  esac
done
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || usage "--runs needs a whole number >= 1, not '$runs'"
[[ "$skip" =~ ^[0-9]+$ ]] || usage "--skip needs a whole number, not '$skip'"
java_home="$("$home/kolo" --java-home)"
work="$(mktemp -d "${TMPDIR:-/tmp}/kolo-averaging.XXXXXX")"
command="kolo run -np 2 ${extra[*]} -x KOLO_TIMELINE=FILE --example synthetic -- $*"
for r in $(seq 1 "$runs"); do
  echo "averaging-breakdown: $label, run $r of $runs..." >&2
  "$home/kolo" run -np 2 "${extra[@]}" -x KOLO_TIMELINE="$work/timeline-$r.json" --example synthetic -- "$@" \
      --json "$work/run-$r.json" > "$work/run-$r.log" 2>&1 || {
    echo "averaging-breakdown: the example failed; the end of $work/run-$r.log:" >&2
    tail -n 5 "$work/run-$r.log" >&2
    exit 1
  }
  files=("$work/run-$r.json" "$work/timeline-$r.json")
  bytes="$("$java_home/bin/java" -cp "$here/kolo-launcher/target/lib/*" "$here/kolo-bench/scripts/AveragingBreakdown.java" \
      --skip "$skip" --bytes "${files[@]}")"
  "$home/kolo" bench allreduce -np 2 "${extra[@]}" --sizes "${bytes}B" --iters 20 --warmup 5 --json "$work/bench-$r.json" \
      > "$work/bench-$r.log" 2>&1 || {
    echo "averaging-breakdown: kolo bench failed; the end of $work/bench-$r.log:" >&2
    tail -n 5 "$work/bench-$r.log" >&2
    exit 1
  }
  "$java_home/bin/java" -cp "$here/kolo-launcher/target/lib/*" "$here/kolo-bench/scripts/AveragingBreakdown.java" \
      --out "$out" --label "$label" --command "$command" --skip "$skip" --bench "$work/bench-$r.json" "${files[@]}"
done
rm -rf "$work"
