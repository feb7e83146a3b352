#!/usr/bin/env bash
# The rendezvous store's side of a large job's start, alone (docs/scaling.md): for each n, StoreStart.java starts n
# ranks as threads of one JVM that connect to one store over loopback at once, write their address and read the table.
#
#   kolo-bench/scripts/store-start.sh [RANKS...]
#
# Default: 1024 ranks. Builds kolo-core's classes first when they are missing.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -gt 0 ] || set -- 1024
for value in "$@"; do
  if ! [[ "$value" =~ ^[1-9][0-9]{0,4}$ ]]; then
    echo "store-start: '$value' is not a whole number from 1 to 99999 (usage: store-start.sh [RANKS...])" >&2
    exit 2
  fi
done
if [ ! -f kolo-core/target/classes/io/kolo/bootstrap/RendezvousServer.class ]; then
  ./mvnw -B -q -pl kolo-core compile
fi
for ranks in "$@"; do
  java -cp kolo-core/target/classes kolo-bench/scripts/StoreStart.java "$ranks"
done
