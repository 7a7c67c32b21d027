#!/usr/bin/env bash
# tests/test_explorer.sh - the schedule explorer (make explorer) in a real browser:
# headless Chromium (Debian's chromium) driven by playwright-core (npm, pinned in
# tests/explorer/package-lock.json, installed there by `npm ci` when missing). Loads
# build/explorer/index.html from file://, sets schedule, S and M and checks the page's
# figures equal `ipupipe-sched --format json` for the same inputs (training and
# forward-only tables, plain and concurrent maps), shows the library's refusal of a
# forward-only table with concurrent stages, opens a second panel,
# pastes a broken CSV and finds the error marker on the failing step, takes a screenshot
# (build/explorer/screenshot.png). Chromium that cannot start is a FAILURE, not a skip.
# Bounded: the browser part is killed after 120 s (it takes about 10 s).
. "$(dirname "$0")/lib.sh"
tool=build/ipupipe-sched
need_bin "$tool"
for f in build/explorer/index.html build/explorer/explorer.js build/explorer/sched_wasm.js; do
  [ -f "$f" ] || give_up "$f is missing (make explorer)"
done
if ! command -v chromium >/dev/null || ! command -v node >/dev/null; then
  give_up "chromium or node is missing (.ci/deps.sh test installs chromium and npm)"
fi
if [ ! -d tests/explorer/node_modules/playwright-core ]; then
  (cd tests/explorer && npm ci --no-audit --no-fund >/dev/null 2>&1) ||
    give_up "npm ci in tests/explorer (playwright-core) failed"
fi
make_tmp explorer
# the cases and what the tool says about them
{
  echo '{"cases": ['
  sep=
  # kind, name, S, M, forward only (0/1), map (- for none)
  for c in "4 1f1b 2 1 0 -" "1 interleaved 3 6 0 -" "6 zb-h1 4 8 0 -" "0 grouped 4 8 0 -" "0 grouped 4 8 1 -" \
           "3 gpipe 3 3 1 0,1,0" "4 1f1b 3 4 0 0,[1,2],3" "0 grouped 4 8 0 0,[1,2],2,3"; do
    set -- $c
    extra=()
    [ "$5" = 1 ] && extra+=(--forward-only)
    [ "$6" != - ] && extra+=(--map "$6")
    json=$("$tool" --schedule "$2" -S "$3" -M "$4" "${extra[@]}" --format json)
    printf '%s{"kind": %d, "name": "%s", "S": %d, "M": %d, "fwd": %d, "map": "%s", "json": %s}\n' "$sep" "$1" "$2" "$3" "$4" \
      "$5" "${6#-}" "$(printf '%s' "$json" | python3 -c 'import json,sys; print(json.dumps(sys.stdin.read().strip()))')"
    sep=,
  done
  # 0B0 in step 2 before 1B0 in step 3: rule 4 fails at step 2 (1-based); forward only with
  # a concurrent map: the library's refusal on the panel
  echo '], "badCsv": "0F0,0B0\n,1F0,1B0", "badStep": "Step 2:",'
  echo ' "refused": {"kind": 3, "S": 3, "M": 4, "fwd": 1, "map": "0,[1,2],3",'
  echo '             "says": "concurrent stages (a stage on several devices) have no forward-only table"}}'
} >"$tmp/expected.json"
timeout 120 node tests/explorer/explorer_test.js "$tmp/expected.json" build/explorer/screenshot.png >"$tmp/log" 2>&1
rc=$?
while IFS= read -r line; do
  case $line in
    "ok   "*) ok "${line#ok   }" ;;
    "FAIL "*) bad "${line#FAIL }" ;;
    *) echo "    $line" ;;
  esac
done <"$tmp/log"
case $rc in
  0|1) ;;
  3) ;; # chromium did not start: already counted as a failure
  124) bad "the browser test timed out after 120 s" ;;
  *) bad "the browser test exited with status $rc" ;;
esac
finish
