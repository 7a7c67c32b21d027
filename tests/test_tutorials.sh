#!/usr/bin/env bash
# tests/test_tutorials.sh - docs/tutorials.md ("The Graphcore tutorials, figure by
# figure"): every `$ build/ipupipe-sched ...` command of the page is run and its output
# compared with the lines under it (trailing blanks aside; a closing `[exit N]` line is
# the transcript's status, which tests/test_docs.sh checks), then each figure's numbers
# are asserted on their own (so a changed block cannot carry a wrong number along); the
# trainer's lines (effective batch, replication, recomputation, offload) are asserted
# on synthetic data (tests/lib.sh gen_syn), as the page's numbers do not depend on the
# images.
. "$(dirname "$0")/lib.sh"
tool=build/ipupipe-sched
need_bin "$tool"
need_bin build/mnist-train
make_tmp tutorials

# 1. the page's blocks reproduce
page=docs/tutorials.md
python3 - "$tmp" "$page" <<'PY' || bad "extracting the commands of $page"
import re, sys
tmp, page = sys.argv[1], sys.argv[2]
sec = [l for l in open(page, encoding="utf-8").read().split("\n") if not re.fullmatch(r"\[exit [0-9]+\]", l)]
cases, i, n = [], 0, 0
while i < len(sec):
    if sec[i].startswith("$ build/ipupipe-sched") or sec[i].startswith("$ for M in"):
        cmd, out = sec[i][2:], []
        i += 1
        while i < len(sec) and not sec[i].startswith("$ ") and sec[i] != "```":
            out.append(sec[i]); i += 1
        open("%s/case%d.cmd" % (tmp, n), "w").write(cmd + "\n")
        open("%s/case%d.want" % (tmp, n), "w").write("\n".join(out) + "\n")
        n += 1
    else:
        i += 1
pass
PY
ncases=$(ls "$tmp"/case*.cmd 2>/dev/null | wc -l)
if [ "$ncases" -ge 13 ]; then ok "$page: $ncases tool commands"; else bad "$page: only $ncases tool commands"; fi
for c in "$tmp"/case*.cmd; do
  k=${c%.cmd}
  bash -c "$(cat "$c")" 2>&1 | sed 's/[ \t]*$//' >"$k.got"
  if cmp -s "$k.want" "$k.got"; then ok "$page block reproduces: $(head -c 90 "$c" | tr -d '\n')"
  else bad "$page block differs: $(cat "$c")"; diff "$k.want" "$k.got" | head -8; fi
done

# 2. each figure's numbers, asserted on their own
run() { "$tool" "$@" >"$tmp/out" 2>&1; }
has() { if grep -qF -- "$2" "$tmp/out"; then ok "$1"; else bad "$1: '$2' not found"; head -5 "$tmp/out"; fi; }
run -S 4 -M 2 --schedule sharding
has "sharding: one op per step, utilisation 1/P" "unit utilisation 0.2500"
has "sharding: never fills" "main none"
run -S 4 -M 8 --schedule grouped
has "grouped: first micro-batch at time-step 11" "first micro-batch done at step 11"
has "grouped: 7,5,3,1 in flight" "peak in-flight per stage: 7 5 3 1"
has "grouped S=4 M=8 phases" "ramp-up 1..3, main 4..19, ramp-down 20..22"
run -S 4 -M 8 --schedule interleaved
has "interleaved: first micro-batch at time-step 8" "first micro-batch done at step 8"
has "interleaved: 4,3,2,1 in flight" "peak in-flight per stage: 4 3 2 1"
run -S 4 -M 8 --schedule interleaved --act-bytes 1000000
has "interleaved stash 10 MB" "(total 10000000)"
run -S 4 -M 8 --schedule grouped --act-bytes 1000000
has "grouped stash 16 MB" "(total 16000000)"
run -S 4 -M 1 --schedule grouped
has "M=1: no main phase" "main none"
run -S 4 -M 6 --schedule interleaved --strict
has "Interleaved: M a multiple of S under strict" "must be a multiple of the number of pipeline stages (S=4)"
run -S 4 -M 12 --schedule grouped --strict
has "Grouped: M a multiple of 2S under strict" "(2S=8); use M=16"
run --compare -S 4 -M 16 --cost F=1,B=2
if grep -qE '^grouped +4 +38 +57 +0.1579 +57 ' "$tmp/out"; then ok "Grouped 57 (BSP = async)"; else bad "Grouped 57"; fi
if grep -qE '^interleaved +4 +38 +72 +0.3333 +57 ' "$tmp/out"; then ok "Interleaved 72 BSP, 57 async"; else bad "Interleaved 72/57"; fi
prev=1
for M in 4 8 16 32 64; do
  b=$("$tool" -S 4 -M $M --format json | python3 -c 'import json,sys; print(json.load(sys.stdin)["bubble_fraction"])')
  want=$(python3 -c "print(round(3/($M+3), 6))")
  if python3 -c "import sys; b,w,p=$b,$want,$prev; sys.exit(0 if abs(b-w)<1e-6 and b<p else 1)"; then ok "M=$M: bubble $b = 3/(M+3), below M/2's"
  else bad "M=$M: bubble $b, expected $want and below $prev"; fi
  prev=$b
done
run -S 3 -M 6 --schedule interleaved --map 0,1,0 -q
has "device mapping: stages 0 and 2 share IPU0" "IPU0  0F0 0F1 2F0 2B0"
run -S 5 -M 8 --map 0,1,2,1,0 --stage-numbering popxl --schedule interleaved -q
has "PopXL: 5 stages on 0,1,2,1,0" "5 pipeline stages (forward 0..2, backward 2..4) on IPUs 0,1,2,1,0"
has "PopXL: FIFO lengths 4, 2, 0" "0->4: 4, 1->3: 2, 2->2: 0"
run -S 5 -M 1 --map 0,1,2,1,0 --stage-numbering popxl --schedule gpipe
has "PopXL M=1: only one IPU active (utilisation 6 ops / (6 x 3))" "unit utilisation 0.3333"
has "PopXL M=1: never fills" "main none"

# 3. the trainer's lines, on synthetic data
gen_syn "$tmp/syn" 2048 64
tr() { build/mnist-train --data "$tmp/syn" --epochs 1 --test-limit 64 "$@" >"$tmp/out" 2>&1; }
tr
has "512 samples per step" "= 512 samples per step"
has "5120 examples per step (TF1 tutorial)" "512 x repeat count 10 = 5120"
has "stash 756.4 KB on IPU0" "stash 756.4 KB"
has "default: IPU0's line" "IPU0: 3.72 MB (weights 945.8 KB, grads 945.8 KB, optimizer 945.8 KB, stash 756.4 KB, exchange 16.0 KB, scratch 196.0 KB)"
tr --replicas 2
has "replicas: 1024 samples per step" "x 2 replica(s) = 1024 samples per step"
has "replicas: 10240 examples per call" "= 10240"
tr --recompute
has "recomputation: IPU0 stashes 294.4 KB" "optimizer 945.8 KB, stash 294.4 KB"
has "recomputation: IPU0's line" "IPU0: 3.51 MB (weights 945.8 KB, grads 945.8 KB, optimizer 945.8 KB, stash 294.4 KB, exchange 16.0 KB, scratch 448.1 KB)"
tr --schedule sequential
has "trainer: sequential has no main phase" "(no main phase: the pipeline never fills)"
# TF1 tutorial step 2 (sharding) and the user guide's replication from the IPU count
tr --schedule sharding
has "trainer: sharding is sequential, named" "Pipeline: 2 stages on 2 IPUs x 1 replica, schedule sequential (sharding: no pipelining, one IPU at work at a time), runner coop"
has "trainer: sharding never fills" "(no main phase: the pipeline never fills)"
tr --ipus 8 --batches-to-accumulate 4
has "user guide 6.4.1: 8 IPUs of a 2-IPU pipeline are 4 replicas" "Pipeline: 2 stages on 2 IPUs x 4 replicas = 8 IPUs, schedule grouped, runner coop"
tr --ipus 8
has "user guide 6.4.1: 2048 samples per step" "Training: batch 32 x 16 micro-batches x 4 replica(s) = 2048 samples per step"
tr --offload
has "offload: no optimizer state on IPU0" "optimizer 0 B, stash 756.4 KB"
# the optimizer state streamed in chunks: 4 KB of staging, not the largest tensor's 784 KB
has "offload: IPU0's line" "IPU0: 2.80 MB (weights 945.8 KB, grads 945.8 KB, optimizer 0 B, stash 756.4 KB, exchange 16.0 KB, scratch 200.0 KB) + streaming memory 945.8 KB"
# half precision: the page's float16 lines (the memory does not depend on the images)
tr --dtype float16
has "float16: IPU0's line" "IPU0: 3.23 MB (weights 472.9 KB, grads 945.8 KB, optimizer 945.8 KB, stash 378.2 KB, exchange 8.0 KB, scratch 553.1 KB)"
tr --dtype float16 --fp32-weights
has "float16, fp32 weights: IPU0's line" "IPU0: 3.59 MB (weights 945.8 KB, grads 945.8 KB, optimizer 945.8 KB, stash 378.2 KB, exchange 8.0 KB, scratch 448.1 KB)"
tr --model cnn --dtype float16
has "float16: the cnn's IPU0 line" "IPU0: 18.25 MB (weights 36.8 KB, grads 73.5 KB, optimizer 73.5 KB, stash 3.26 MB, exchange 1.89 MB, scratch 12.93 MB)"
has "float16: the cnn's IPU1 line" "IPU1: 8.56 MB (weights 31.3 KB, grads 62.6 KB, optimizer 62.6 KB, stash 301.4 KB, exchange 1.89 MB, scratch 6.23 MB)"
# the trainer's trace: the CSV's op names, a colour per kind, the infeed as its own
# event (not folded into stage 0's forward), the layers inside each stage op
tr --trace "$tmp/trace.json"
if python3 - "$tmp/trace.json" <<'PY'
import json, sys
ev = [e for e in json.load(open(sys.argv[1]))["traceEvents"] if e["ph"] == "X"]
ops = {e["name"]: e for e in ev if e["cat"] in "FBIW"}
assert "0F0" in ops and "1B0" in ops, "op names like the CSV's"
assert ops["0F0"]["cname"] == "thread_state_running" and ops["0B0"]["cname"] == "thread_state_iowait"
infeed = [e for e in ev if e["cat"] == "infeed"]
assert len(infeed) == 16, "one infeed per micro-batch of the step"
assert abs(infeed[0]["ts"] + infeed[0]["dur"] - ops["0F0"]["ts"]) < 0.002, "0F0 starts when its infeed ends"
assert ops["0F0"]["dur"] < ops["0B0"]["dur"], "stage 0's forward is shorter than its backward once the infeed is apart"
lay = [e["name"] for e in ev if e["cat"] == "layer" and e["pid"] == 0 and e["ts"] >= ops["0F0"]["ts"] and e["ts"] < ops["0F0"]["ts"] + ops["0F0"]["dur"]]
assert lay[:3] == ["dense256", "dense256.relu", "dense128"], lay
assert any(e["name"] == "update" for e in ev)
PY
then ok "trainer trace: CSV op names, colours, infeed events, layers inside the ops"; else bad "trainer trace"; fi
finish
