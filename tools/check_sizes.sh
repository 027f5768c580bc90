#!/usr/bin/env bash
# The size limits CI keeps: no Rust source file under src/ (the library and the CLI) or
# python/src/ (the Python package's compiled half) over 750 lines, and no function over 90
# lines (from its `fn` line to its closing brace, as rustfmt lays them out: the brace at the
# `fn` line's indentation). Prints each offender; fails if any.
set -euo pipefail
cd "$(dirname "$0")/.."
MAX_FILE=750
MAX_FN=90
status=0
while IFS= read -r file; do
  lines=$(wc -l <"$file")
  if [ "$lines" -gt "$MAX_FILE" ]; then
    echo "$file: $lines lines (at most $MAX_FILE)"
    status=1
  fi
  if ! awk -v max="$MAX_FN" -v file="$file" '
    # A function starts at a line whose first word (after pub, const, async, unsafe,
    # extern) is fn; it ends at the first later line that is its indentation and "}".
    !open && /^[ \t]*((pub(\([a-z: ]+\))?|const|async|unsafe|extern( "[^"]*")?) +)*fn [A-Za-z_]/ {
      if ($0 ~ /;[ \t]*$/) next  # a declaration without a body (a trait method)
      match($0, /^[ \t]*/); indent = substr($0, 1, RLENGTH)
      name = $0; sub(/^.*fn /, "", name); sub(/[<(].*$/, "", name)
      start = NR; open = 1
      if ($0 ~ /}[ \t]*$/ && $0 ~ /{/) open = 0  # a one-line function
      next
    }
    open && $0 == indent "}" {
      len = NR - start + 1
      if (len > max) { printf "%s:%d: fn %s is %d lines (at most %d)\n", file, start, name, len, max; bad = 1 }
      open = 0
    }
    END { exit bad }
  ' "$file"; then
    status=1
  fi
done < <(find src python/src -name '*.rs' | sort)
exit $status
