#!/usr/bin/env bash
# A newcomer's first contact, measured: the trivial 2-rank job (Kolo.init, one allreduce of 1 float, shutdown) from
# `./kolo run` to exit, split into its phases, with and without the JDK AOT caches the kolo script makes after a
# build, beside `mpirun -np 2` of the same program in C; then the README example's first ops of 4 MiB against its
# steady state. Runs take turns (AOT, no AOT, mpirun) so all meet the machine in the same state.
#
#   kolo-bench/scripts/first-run.sh [--runs N] [--json FILE]
#
# Phases (medians over the runs, rank 0): launcher = from `./kolo` to rank 0's JVM start (the kolo script, the
# launcher JVM, planning, spawning); JVM = rank JVM start to main; init = Kolo.init (rendezvous, transports,
# engine); first op; shutdown; exit = from rank 0's shutdown to the launcher's exit (JVM exits, the launcher's end).
set -euo pipefail

runs=7
json=""
usage() { echo "first-run.sh: $1 (options: --runs N, --json FILE; try --help)" >&2; exit 2; }
while [ $# -gt 0 ]; do
  # Without this, a missing value ended in bash's "$2: unbound variable", or took the next option as the value.
  case "$1" in
    --runs|--json) [ $# -ge 2 ] && [[ "$2" != -* ]] || usage "$1 needs a value" ;;
  esac
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --json) json="$2"; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) usage "unknown argument '$1'" ;;
  esac
done
case "$runs" in (''|*[!0-9]*|0) usage "--runs needs a positive number, not '$runs'" ;; esac

root="$(cd "$(dirname "$(readlink -f "$0")")/../.." && pwd)"
cd "$root"
work="$(mktemp -d "${TMPDIR:-/tmp}/kolo-first-run.XXXXXX")"
trap 'rm -rf "$work"' EXIT

./kolo --help > /dev/null   # builds, and makes the AOT caches, when the checkout changed
[ -f kolo-launcher/target/kolo-launcher.aot ] || echo "first-run.sh: no AOT caches (KOLO_AOT=0 at build?): both rows run without" >&2

mpi=""
if command -v mpicc > /dev/null && command -v mpirun > /dev/null; then
  cat > "$work/trivial.c" <<'EOF'
#include <mpi.h>
int main(int argc, char **argv) {
  float x = 1, y = 0;
  MPI_Init(&argc, &argv);
  MPI_Allreduce(&x, &y, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  return y == 2 ? 0 : 1;
}
EOF
  mpicc -O2 -o "$work/trivial" "$work/trivial.c" && mpi="$work/trivial"
else
  echo "first-run.sh: no Open MPI (mpicc, mpirun): its row is skipped" >&2
fi
mpirun_args=(--allow-run-as-root --oversubscribe -np 2)

now() { date +%s%3N; }

# One trivial job; appends "total launcher jvm init firstop shutdown exit" (ms) to $1.
kolo_job() {
  local out="$1" aot="$2" t0 t1 line
  t0="$(now)"
  line="$(KOLO_AOT="$aot" ./kolo run -np 2 --example allreduce -- --elements 1 --iterations 1 --startup 2>&1 \
      | grep -o 'startup: .*' || true)"
  t1="$(now)"
  [ -n "$line" ] || { echo "first-run.sh: the job printed no startup line" >&2; exit 1; }
  echo "$line" | awk -v t0="$t0" -v t1="$t1" '{
      gsub(/[+()]/, " ");
      jvm = $5; main = $10; init = $14; first = $19; shut = $23;
      print t1 - t0, jvm - t0, main, init - main, first - init, shut - first, t1 - (jvm + shut) }' >> "$out"
}

for ((r = 1; r <= runs; r++)); do
  kolo_job "$work/aot" 1
  kolo_job "$work/noaot" 0
  if [ -n "$mpi" ]; then
    t0="$(now)"; mpirun "${mpirun_args[@]}" "$mpi" > /dev/null 2>&1; t1="$(now)"
    echo "$((t1 - t0))" >> "$work/mpi"
  fi
  echo "first-run.sh: run $r of $runs done" >&2
done

median() { sort -n | awk '{v[NR] = $1} END {if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
col() { awk -v c="$2" '{print $c}' "$1" | median; }

printf '\nTrivial 2-rank job, medians of %d runs (ms)\n' "$runs"
printf '%-22s %7s %9s %5s %6s %9s %9s %6s\n' "" total launcher JVM init "first op" shutdown exit
rows=()
for v in aot noaot; do
  label="Kolo, AOT caches"; [ "$v" = noaot ] && label="Kolo, KOLO_AOT=0"
  vals=()
  for c in 1 2 3 4 5 6 7; do vals+=("$(col "$work/$v" "$c")"); done
  printf '%-22s %7s %9s %5s %6s %9s %9s %6s\n' "$label" "${vals[@]}"
  rows+=("{\"series\": \"$label\", \"total_ms\": ${vals[0]}, \"launcher_ms\": ${vals[1]}, \"jvm_ms\": ${vals[2]}, \"init_ms\": ${vals[3]}, \"first_op_ms\": ${vals[4]}, \"shutdown_ms\": ${vals[5]}, \"exit_ms\": ${vals[6]}}")
done
if [ -n "$mpi" ]; then
  m="$(median < "$work/mpi")"
  printf '%-22s %7s\n' "mpirun -np 2 (C)" "$m"
  rows+=("{\"series\": \"mpirun -np 2 (C)\", \"total_ms\": $m}")
fi

# The README example as a newcomer runs it (4 MiB, 60 ops): its first ops against its steady state.
printf '\nREADME example, ./kolo run -np 2 --example allreduce (4 MiB)\n'
ratios=()
for ((r = 1; r <= 3; r++)); do
  line="$(./kolo run -np 2 --example allreduce 2>&1 | grep -o 'first op .*' | head -n1)"
  echo "  $line"
  ratio="$(echo "$line" | awk '{
      first = $3; rest = $7; for (i = 1; i <= NF; i++) if ($i ~ /^avg/) last = $(i - 2);
      printf "%.2f", (first + 9 * rest) / 10 / last }')"
  ratios+=("$ratio")
done
echo "  first 10 ops / steady state: ${ratios[*]}"

if [ -n "$json" ]; then
  {
    printf '{"command": "kolo-bench/scripts/first-run.sh --runs %d", "date": "%s", "host_cpus": %d,\n' \
        "$runs" "$(date -u +%Y-%m-%dT%H:%MZ)" "$(nproc)"
    printf ' "trivial_job": [\n  %s\n ],\n' "$(IFS=$'\n'; echo "${rows[*]}" | paste -sd, | sed 's/},{/},\n  {/g')"
    printf ' "readme_first10_over_steady": [%s]}\n' "$(IFS=,; echo "${ratios[*]}")"
  } > "$json"
  echo "wrote $json"
fi
