#!/usr/bin/env bash
# Builds the own-row values under the first repetition (abapa's, or with RULES=awari the
# awari rules') from nothing (or from whatever of them is on disk) up to layer TO, one process
# a step, in the order of docs/measurements.md ("Abapa, first repetition"):
#
#   layers 0..=8 at 10^6 nodes a root; layer 8 searched again at 4*10^7 (its last 893 open
#   positions); 9..=12 at 10^6; then one layer a process at 10^5 (the lean pass, which falls
#   back on the in-memory pass where it leaves positions open and the layer fits).
#
# Layers 0..=12 come from data/seed when it holds them (verified first). A step whose files
# are on disk is skipped, and a layer cut by a kill or Ctrl-C resumes from
# its checkpoint, so the same command resumes the whole build. Each step's `/usr/bin/time -v`
# goes to $DB/build-own-row-$RULES.times. Stop it with `kill -INT` on the awari process (not on
# time's), which saves a checkpoint.
#
# Usage: tools/build-own-row.sh [TO]
#        (environment: RULES=abapa, DB=data/db/lean, AWARI=target/release/awari)
set -euo pipefail
cd "$(dirname "$0")/.."
# The whole script is one function, read in full before it runs: editing this file while a
# build runs cannot change what that build does next.
main() {
  TO=${1:-36}
  RULES=${RULES:-abapa}
  DB=${DB:-data/db/lean}
  AWARI=${AWARI:-target/release/awari}
  TIMES="$DB/build-own-row-$RULES.times"
  TABLES=(--cycles own-row-first --rules "$RULES" --db "$DB")
  mkdir -p "$DB"

  have_layer() { [ -e "$DB/own-row/$RULES/layer-$(printf %02d "$1").r2lo" ]; }

  # Whether every position of layer $1 is exact, read from `awari stats --json`.
  exact_layer() {
    "$AWARI" stats "${TABLES[@]}" --layers "$1" --json |
      python3 -c 'import json,sys; l=json.load(sys.stdin)[0]; sys.exit(l["exact"] != l["positions"])'
  }

  step() {
    echo "=== $(date -u +%FT%TZ) awari build ${TABLES[*]} $*" | tee -a "$TIMES"
    /usr/bin/time -v -a -o "$TIMES" "$AWARI" build "${TABLES[@]}" "$@"
  }

  # Layers 0..=12 are committed under data/seed (their layer 8 took over an hour of search):
  # taken from there, once `awari verify` holds on them, when none of them is on disk.
  SEED=data/seed
  if ! have_layer 0 && [ -e "$SEED/own-row/$RULES/layer-12.r2lo" ]; then
    echo "=== $(date -u +%FT%TZ) layers 0..=12 from $SEED" | tee -a "$TIMES"
    "$AWARI" verify --cycles own-row-first --rules "$RULES" --db "$SEED" --layers 0..12
    mkdir -p "$DB/own-row/$RULES"
    cp "$SEED/own-row/$RULES"/layer-*.r2?? "$DB/own-row/$RULES/"
  fi
  have_layer 8 || step --max-seeds 8 --search-budget 1000000
  exact_layer 8 || step --max-seeds 8 --search-budget 40000000 --refine 8
  [ "$TO" -le 8 ] && exit 0
  have_layer 12 || step --max-seeds $((TO < 12 ? TO : 12)) --search-budget 1000000
  for n in $(seq 13 "$TO"); do
    have_layer "$n" || step --max-seeds "$n" --search-budget 100000 --lean
  done
}
main "$@"
