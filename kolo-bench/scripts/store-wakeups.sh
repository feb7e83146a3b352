#!/usr/bin/env bash
# What the rendezvous store spends on requests waiting in a table read (docs/scaling.md, "What breaks first"): for each
# number of waiters, StoreWakeups.java makes them wait in one table read while as many writes arrive a gap apart.
#
#   kolo-bench/scripts/store-wakeups.sh [GAP_MICROS [WAITERS...]]
#
# Defaults: writes 3000 us apart; 500 and 1000 waiters. Builds kolo-core's classes first when they are missing.
set -euo pipefail
cd "$(dirname "$0")/../.."
gap="${1:-3000}"
shift || true
[ $# -gt 0 ] || set -- 500 1000
for value in "$gap" "$@"; do
  if ! [[ "$value" =~ ^[1-9][0-9]{0,6}$ ]]; then
    echo "store-wakeups: '$value' is not a whole number from 1 to 9999999 (usage: store-wakeups.sh [GAP_MICROS [WAITERS...]])" >&2
    exit 2
  fi
done
if [ ! -f kolo-core/target/classes/io/kolo/bootstrap/InMemoryStore.class ]; then
  ./mvnw -B -q -pl kolo-core compile
fi
for waiters in "$@"; do
  java -cp kolo-core/target/classes kolo-bench/scripts/StoreWakeups.java "$waiters" "$gap"
done
