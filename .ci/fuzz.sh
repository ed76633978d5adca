#!/usr/bin/env bash
# Runs the module's Fuzz targets for a short time each (FUZZTIME, default
# 3s). FUZZ_ONLY, a space-separated list of target names, narrows the run:
# the test command fuzzes only the GRES and CPU-list parsers, because a
# random finding elsewhere must not turn an unrelated change red; `make
# fuzz` explores every parser. Every target's seed corpus and saved
# findings run on every `go test` regardless.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime="${FUZZTIME:-3s}"
only=" ${FUZZ_ONLY:-} "
git ls-files '*_test.go' | xargs grep -l '^func Fuzz' | sort | while read -r file; do
  pkg="./$(dirname "$file")"
  for target in $(grep -o '^func Fuzz[A-Za-z0-9_]*' "$file" | sed 's/^func //'); do
    if [ -n "${FUZZ_ONLY:-}" ] && [[ "$only" != *" $target "* ]]; then continue; fi
    echo "fuzz: $pkg $target ($fuzztime)"
    if ! out=$(go test -run='^$' -fuzz="^${target}\$" -fuzztime="$fuzztime" "$pkg" 2>&1); then
      # On a loaded machine the fuzzing engine itself can miss its own
      # deadline while stopping; that is no finding. A real one always
      # leaves its input under testdata/fuzz.
      if grep -q 'context deadline exceeded' <<<"$out" && ! grep -q 'Failing input written to' <<<"$out"; then
        echo "fuzz: $target: the fuzzing engine timed out while stopping (no failing input); not a finding"
        continue
      fi
      printf '%s\n' "$out"   # the failing input and where it was saved
      exit 1
    fi
    printf '%s\n' "$out" | tail -n 1
  done
done
