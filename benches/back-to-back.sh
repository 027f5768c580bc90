#!/usr/bin/env bash
# Back-to-back timing of one layer's build by several binaries, from the same lower layers.
#
#   benches/back-to-back.sh --db DIR --layer N [--runs K] [--threads T] [--warm-up] REV... [-- BUILD_ARGS...]
#
# Each REV is a path to an `awari` binary or a git revision of this repository; a revision
# is built once, in release mode, in its own worktree and target folder under
# $AWARI_BACK_TO_BACK_DIR (default: awari-back-to-back under $TMPDIR, or /tmp), so the
# binaries share no build artefacts. Each run gets a fresh folder beside DIR holding hard
# links to DIR's layers below N (no copy, no disk), builds layer N into it with
# `awari build --max-seeds N --threads T -q BUILD_ARGS` under `/usr/bin/time`, and compares
# the layer's files with DIR's own when DIR has them. The binaries take turns (run 1 of
# each, then run 2 of each, ...) so that a drift in the machine's load spreads over all of
# them. Prints one Markdown row a run, the binary named as given (a revision by its hash),
# and exits non-zero if any run's files differ from DIR's. With --warm-up, one run of the
# first binary comes before them, reported as "warm-up" and to be left out of comparisons:
# after other work (a big layer's build) the first run finds the page cache cold and can
# take twice as long as the next.
#
# Example: the lean pass on layer 26, the commit before against the work tree's binary:
#
#   cargo build --release
#   benches/back-to-back.sh --db data/db --layer 26 --runs 2 HEAD~1 target/release/awari -- --lean
set -euo pipefail

usage() {
  echo "usage: $(sed -n '4s/^# *//p' "$0")" >&2
  exit 2
}

db="" layer="" runs=1 threads=2 warm_up=0
revs=() build_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --db) db=$2; shift 2 ;;
    --layer) layer=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --warm-up) warm_up=1; shift ;;
    --) shift; build_args=("$@"); break ;;
    -*) usage ;;
    *) revs+=("$1"); shift ;;
  esac
done
[ -n "$db" ] && [ -n "$layer" ] && [ ${#revs[@]} -gt 0 ] || usage
[[ $layer =~ ^[0-9]+$ ]] || { echo "error: --layer takes a number of seeds, not '$layer'" >&2; exit 1; }
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "error: --runs takes a positive number, not '$runs'" >&2; exit 1; }
[ -d "$db" ] || { echo "error: no database folder at $db" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "error: /usr/bin/time is missing (Debian package 'time')" >&2; exit 1; }

repo=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
# Outside the repository: a worktree inside it would count as a member of its workspace.
work="${AWARI_BACK_TO_BACK_DIR:-${TMPDIR:-/tmp}/awari-back-to-back}"
mkdir -p "$work"

# A binary for each revision: an executable path as given, else a release build of it.
binaries=() labels=()
for rev in "${revs[@]}"; do
  if [ -f "$rev" ] && [ -x "$rev" ]; then
    binaries+=("$(realpath "$rev")")
    labels+=("$rev")
    continue
  fi
  sha=$(git -C "$repo" rev-parse --verify --quiet "$rev^{commit}") \
    || { echo "error: '$rev' is neither an executable nor a revision" >&2; exit 1; }
  bin="$work/bin/awari-${sha:0:7}"
  if [ ! -x "$bin" ]; then
    tree="$work/tree-${sha:0:7}"
    [ -d "$tree" ] || git -C "$repo" worktree add --detach "$tree" "$sha" > /dev/null
    echo "building ${sha:0:7} in its own target folder" >&2
    CARGO_TARGET_DIR="$work/target-${sha:0:7}" cargo build --release --bin awari \
      --manifest-path "$tree/Cargo.toml" -q
    mkdir -p "$work/bin"
    cp "$work/target-${sha:0:7}/release/awari" "$bin"
  fi
  binaries+=("$bin")
  labels+=("${sha:0:7}")
done

nn=$(printf '%02d' "$layer")
# A run's folder and its two side files: removed after each run, and however the script
# ends (a failed build, an interrupt).
scratch=""
remove_run() {
  if [ -n "$scratch" ]; then rm -rf "$scratch" "$scratch.time" "$scratch.err"; fi
}
trap remove_run EXIT
differed=0
echo "| run | binary | wall s | user s | system s | peak RSS kB | files |"
echo "|---|---|---|---|---|---|---|"
for run in $(seq $((1 - warm_up)) "$runs"); do
  for i in "${!binaries[@]}"; do
    # Run 0 is the warm-up: the first binary only.
    if [ "$run" -eq 0 ] && [ "$i" -gt 0 ]; then continue; fi
    bin=${binaries[$i]}
    scratch="$(dirname "$(realpath "$db")")/back-to-back-$layer-$run-$i"
    rm -rf "$scratch"
    # The lower layers, hard-linked: the same bytes on the same disk, nothing copied.
    for rules in "$db"/*/; do
      name=$(basename "$rules")
      for file in "$rules"layer-*.aw*; do
        [ -e "$file" ] || continue
        base=$(basename "$file")
        number=${base#layer-}
        number=${number%%.*}
        if [ $((10#$number)) -lt "$layer" ]; then
          mkdir -p "$scratch/$name"
          ln "$file" "$scratch/$name/$base"
        fi
      done
    done
    if ! /usr/bin/time -o "$scratch.time" -f '%e %U %S %M' \
      "$bin" build --db "$scratch" --max-seeds "$layer" --threads "$threads" -q \
      "${build_args[@]}" > /dev/null 2> "$scratch.err"; then
      echo "error: ${labels[$i]} failed to build layer $layer (run $run): $(tail -n 1 "$scratch.err")" >&2
      exit 1
    fi
    read -r wall user system rss < "$scratch.time"
    files="not compared"
    for built in "$scratch"/*/layer-"$nn".aw*; do
      reference="$db/${built#"$scratch"/}"
      [ -e "$reference" ] || continue
      if cmp -s "$built" "$reference"; then
        [ "$files" = "DIFFERENT" ] || files="same as $db"
      else
        files="DIFFERENT"
        differed=1
      fi
    done
    shown=$run
    [ "$run" -eq 0 ] && shown="warm-up"
    echo "| $shown | ${labels[$i]} | $wall | $user | $system | $rss | $files |"
    remove_run
  done
done
if [ "$differed" -ne 0 ]; then
  echo "error: a run's files differ from $db's" >&2
  exit 1
fi
