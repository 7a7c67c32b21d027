#!/usr/bin/env bash
# tests/test_explorer.sh - the schedule explorer (make explorer) in a real browser:
# headless Chromium (Debian's chromium) driven by playwright-core (npm, pinned in
# tests/explorer/package-lock.json, installed there by `npm ci` when missing). Loads
# build/explorer/index.html from file://, sets schedule, S and M and checks the page's
# figures equal `ipupipe-sched --format json` for the same inputs (training and
# forward-only tables, plain and concurrent maps), shows the library's refusal of a
# forward-only table with concurrent stages; then the lecture features: the schedule menu
# lists every kind, columns added and removed (side by side at 1600x900, charts within
# them), the URL reproduces the view, SVG and PNG downloads, activation bytes and the
# memory peaks (equal to the tool's), the step cursor (equal to the tool's CSV), async
# timing (its chart's end equal to async_time), the labels of 0; pastes a broken CSV and
# finds the error marker on the failing step, takes a screenshot
# (build/explorer/screenshot.png). Chromium that cannot start is a FAILURE, not a skip.
# Bounded: the browser part is killed after 120 s (it takes about 15 s).
. "$(dirname "$0")/lib.sh"
tool=build/ipupipe-sched
# the page as the sources make it now (a no-op when make check has just built it)
make -s explorer >/dev/null || give_up "make explorer failed"
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
  echo '             "says": "concurrent stages (a stage on several devices) have no forward-only table"},'
  # the schedule menu lists every kind the header has
  printf ' "kindCount": %s,\n' "$(sed -n 's/^#define IPUP_SCHED_KIND_COUNT \([0-9]*\).*/\1/p' ipupipe_sched.h)"
  # memory over time: each device's peak bytes are the tool's (stash_bytes with one stage
  # per device, stash_bytes_device with a concurrent stage)
  echo ' "mem": ['
  sep=
  for c in "1f1b 4 8 - 1000 stash_bytes" "1f1b 4 8 - 1000,2000,3000,4000 stash_bytes" "zb-h1 4 8 - 100 stash_bytes" \
           "grouped 3 4 0,[1,2],3 10,20,30 stash_bytes_device"; do
    set -- $c
    extra=()
    [ "$4" != - ] && extra+=(--map "$4")
    peaks=$("$tool" --schedule "$1" -S "$2" -M "$3" "${extra[@]}" --act-bytes "$5" --format json |
            python3 -c "import json,sys; print(json.load(sys.stdin)['$6'])")
    printf '%s{"sched": "%s", "S": %d, "M": %d, "map": "%s", "act": "%s", "peaks": %s}\n' "$sep" "$1" "$2" "$3" \
      "${4#-}" "$5" "$peaks"
    sep=,
  done
  echo '],'
  # the cursor: what each device runs at a step is that column of the tool's CSV
  printf ' "cursorStep": 9, "cursorCsv": %s}\n' \
    "$("$tool" --schedule 1f1b -S 4 -M 8 --format csv | python3 -c 'import json,sys; print(json.dumps(sys.stdin.read()))')"
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
