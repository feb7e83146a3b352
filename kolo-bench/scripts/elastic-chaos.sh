#!/usr/bin/env bash
# The chaos benchmark of elastic training: N runs of elastic MNIST under ./kolo run -np 3 --min-np 2, each SIGKILLing
# one random worker at a random step; prints one line per run and a table, writes JSON and every run's log.
#
#   kolo-bench/scripts/elastic-chaos.sh [--runs N] [--seed S] [--data DIR] [--out DIR] [--hang-timeout S]
#                                       [--commit-every K] [--max-kill-batch B] [-- more mnist options]
#
# Defaults: 50 runs, a seed from the clock (printed), MNIST in ../shared/data/mnist, output in target/elastic-chaos,
# a run still going after 300 s counts as a hang (killed, its log kept with the workers' stacks).
set -euo pipefail
cd "$(dirname "$0")/../.."
java="${JAVA_HOME:+$JAVA_HOME/bin/}java"
# Builds the launcher when the sources changed, before the first run's clock starts.
./kolo run --help > /dev/null
exec "$java" -Dkolo.home="$PWD" kolo-bench/scripts/ElasticChaos.java "$@"
