#!/usr/bin/env bash
# Rewrites the results tables of README.md and docs/*.md from the JSON files under docs/results/ (each table sits
# between <!-- results KIND FILE --> and <!-- /results --> comments). --check only says which pages are out of date.
#   kolo-bench/scripts/results-tables.sh [--check]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
java_home="$("$root/kolo" --java-home)"
# The kolo script builds what is missing; its help is the cheapest command that does.
"$root/kolo" --help > /dev/null
exec "$java_home/bin/java" -cp "$root/kolo-launcher/target/lib/*" io.kolo.bench.ResultsTables "$@" "$root"
