#!/usr/bin/env bash
# Runs every Fuzz target of the module for a short time (FUZZTIME, default
# 3s), so each parser of user input meets new random input on every test run.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime="${FUZZTIME:-3s}"
git ls-files '*_test.go' | xargs grep -l '^func Fuzz' | sort | while read -r file; do
  pkg="./$(dirname "$file")"
  for target in $(grep -o '^func Fuzz[A-Za-z0-9_]*' "$file" | sed 's/^func //'); do
    echo "fuzz: $pkg $target ($fuzztime)"
    if ! out=$(go test -run='^$' -fuzz="^${target}\$" -fuzztime="$fuzztime" "$pkg" 2>&1); then
      printf '%s\n' "$out"   # the failing input and where it was saved
      exit 1
    fi
    printf '%s\n' "$out" | tail -n 1
  done
done
