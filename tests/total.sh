#!/usr/bin/env bash
# tests/total.sh - prints each gate's time (build/test-times: LABEL SECONDS lines, a
# label that ran several times summed) and the closing line of `make test` / `make check`
# from build/test-totals.
if [ -f build/test-times ]; then
  echo "time per gate (seconds):"
  awk '{ if (!($1 in t)) o[n++] = $1; t[$1] += $2 } END { for (i = 0; i < n; i++) printf "  %-14s %5d\n", o[i], t[o[i]] }' build/test-times
fi
tp=0; tf=0
if [ -f build/test-totals ]; then
  while read -r p f; do tp=$((tp + p)); tf=$((tf + f)); done < build/test-totals
else tf=1; fi
echo "$tp passed, $tf failed"
[ "$tf" -eq 0 ]
