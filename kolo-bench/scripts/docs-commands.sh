#!/usr/bin/env bash
# Runs the commands of README.md and docs/*.md that a page marks as runnable on one machine, as a new user would:
# each fenced sh block after a <!-- runnable --> comment (<!-- runnable N -->: only its N-th command), in a scratch
# directory that looks like the checkout (its top-level entries linked, ../shared beside it when there is one), so
# that what the commands write stays out of the checkout. Prints one line per command and exits 1 if any failed.
# DocsCommandsTest checks the syntax of every block and the kolo run options of every command in the normal suite.
#   kolo-bench/scripts/docs-commands.sh [--timeout SECONDS]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
timeout_s=300
while [ $# -gt 0 ]; do
  case "$1" in
    (--timeout) timeout_s="${2:?--timeout needs seconds}"; shift 2 ;;
    (*) echo "docs-commands: unknown option $1 (usage: $0 [--timeout SECONDS])" >&2; exit 2 ;;
  esac
done
scratch="$(mktemp -d "${TMPDIR:-/tmp}/kolo-docs.XXXXXX")"
trap 'rm -rf "$scratch"' EXIT
mkdir "$scratch/work"
for entry in "$root"/* "$root"/.mvn; do
  [ -e "$entry" ] && ln -s "$entry" "$scratch/work/${entry##*/}"
done
[ -d "$root/../shared" ] && ln -s "$(cd "$root/../shared" && pwd)" "$scratch/shared"

# Prints each runnable command as one line: PAGE<TAB>COMMAND (continuation lines joined, comments dropped).
extract() {
  awk -v page="$1" '
    /^<!-- runnable( [0-9]+)? -->$/ { want = ($3 == "-->") ? 0 : $3; armed = 1; next }
    armed && /^```sh$/ { inblock = 1; armed = 0; n = 0; cmd = ""; next }
    inblock && /^```$/ { inblock = 0; next }
    inblock {
      line = $0
      if (cmd == "" && line ~ /^[[:space:]]*(#|$)/) next
      cont = sub(/\\$/, "", line)
      if (!cont) sub(/[[:space:]]+#.*$/, "", line)
      cmd = cmd line
      if (!cont) { n++; if (want == 0 || want == n) print page "\t" cmd; cmd = "" }
      next
    }
    { armed = armed && /^[[:space:]]*$/ }
  ' "$1"
}

failed=0; ran=0
while IFS=$'\t' read -r page cmd; do
  ran=$((ran + 1))
  start=$SECONDS
  if (cd "$scratch/work" && timeout "$timeout_s" bash -c "set -e; $cmd") > "$scratch/out" 2>&1 < /dev/null; then
    echo "ok    ${page#"$root"/}: $cmd ($((SECONDS - start)) s)"
  else
    failed=$((failed + 1))
    echo "FAIL  ${page#"$root"/}: $cmd ($((SECONDS - start)) s); its last lines:"
    tail -n 15 "$scratch/out" | sed 's/^/      /'
  fi
done < <(for page in "$root/README.md" "$root"/docs/*.md; do extract "$page"; done)
echo "docs-commands: $ran run, $failed failed"
[ "$failed" -eq 0 ]
