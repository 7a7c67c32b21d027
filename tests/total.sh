#!/usr/bin/env bash
# tests/total.sh - prints the closing line of `make test` from build/test-totals.
tp=0; tf=0
if [ -f build/test-totals ]; then
  while read -r p f; do tp=$((tp + p)); tf=$((tf + f)); done < build/test-totals
else tf=1; fi
echo "$tp passed, $tf failed"
[ "$tf" -eq 0 ]
