#!/usr/bin/env bash
# A run killed with SIGKILL at random moments (20 trials) always leaves snapshots.h5 and
# snapshots.xmf readable up to the last complete snapshot, and `tiersim run --restart` then
# finishes with the same final state, bit for bit, as a run that was never interrupted (CPU).
# Also: SIGTERM stops cleanly with a final snapshot, and an injected NaN is caught.
set -u
source "$(dirname "$0")/prologue.sh"
CHECK=tests/integration/check_output_readable.py
require_h5py
ARGS=(--backend cpu --set nbody.count=384 --steps 60 --set run.snapshot_every=5 --set run.diagnostics_every=5 -q)
fail=0

# The reference run, also timed from its first checkpoint to its end: one snapshot interval of
# it is the spread of a kill past its chosen snapshot (below).
"$TIERSIM" run cases/plummer.toml "${ARGS[@]}" --out "$WORK/reference" >/dev/null &
pid=$!
for _ in $(seq 1 3000); do [ -f "$WORK/reference/checkpoint.h5" ] || ! kill -0 $pid 2>/dev/null && break; sleep 0.01; done
t0=$(date +%s.%N)
wait $pid || exit 1
interval=$(echo "($(date +%s.%N) - $t0) / 12" | bc -l)  # 60 steps, a snapshot (and checkpoint) every 5
final() {  # the last frame's positions and velocities, as exact hex
  $PY - "$1" <<'PYEOF'
import sys, h5py
with h5py.File(sys.argv[1] + "/snapshots.h5", "r") as f:
    g = f["/particles/all"]
    import hashlib
    print(int(g["position/step"][-1]), hashlib.sha256(g["position/value"][-1].tobytes() + g["velocity/value"][-1].tobytes()).hexdigest())
PYEOF
}
ref=$(final "$WORK/reference")
early=0 finished=0 interrupted=0 trial=0
# Until 20 runs were killed part-way (at most 40 tries): kills before the first checkpoint or
# after the end are counted but test nothing.
while [ $interrupted -lt 20 ] && [ $trial -lt 40 ]; do
  trial=$((trial + 1))
  dir="$WORK/t$trial"
  "$TIERSIM" run cases/plummer.toml "${ARGS[@]}" --out "$dir" >/dev/null 2>&1 &
  pid=$!
  # A kill point that does not depend on how fast this machine is at the moment: wait until the
  # run has completed the snapshot of step 5k (k random in 1..9, so 2 to 10 snapshots remain),
  # then kill at a random moment within about one snapshot interval of the reference run: during
  # a step, a snapshot or a checkpoint write.
  k=$((RANDOM % 9 + 1))
  while [ "$(ls "$dir/snapshots.d" 2>/dev/null | grep -c '\.h5$')" -le $k ] && kill -0 $pid 2>/dev/null; do sleep 0.005; done
  sleep "$(awk -v s="$RANDOM" -v d="$interval" 'BEGIN { srand(s); printf "%.4f", d * rand() }')"
  kill -9 $pid 2>/dev/null
  wait $pid 2>/dev/null
  if [ ! -f "$dir/checkpoint.h5" ]; then
    early=$((early + 1))  # killed before the first checkpoint: nothing to continue
    continue
  fi
  if ! steps=$($PY $CHECK "$dir" 2>&1); then
    echo "FAIL trial $trial: output not readable after kill -9: $steps"; fail=1; continue
  fi
  if grep -q '"interrupted"' "$dir/summary.json" 2>/dev/null; then
    finished=$((finished + 1))  # the run had ended before the kill
    continue
  fi
  interrupted=$((interrupted + 1))
  if ! "$TIERSIM" run --restart "$dir" -q >/dev/null 2>"$dir.err"; then
    echo "FAIL trial $trial: restart failed: $(cat "$dir.err")"; fail=1; continue
  fi
  got=$(final "$dir")
  if [ "$got" != "$ref" ]; then
    echo "FAIL trial $trial: restarted run differs from the uninterrupted one (killed with snapshots at: $steps)"; fail=1
  else
    echo "ok trial $trial: killed with snapshots at steps [$steps]; restart equal bit for bit"
  fi
  $PY $CHECK "$dir" >/dev/null || { echo "FAIL trial $trial: output unreadable after restart"; fail=1; }
done
echo "$trial runs killed: $interrupted part-way, $early before the first checkpoint, $finished after the end"
[ $interrupted -ge 20 ] || { echo "FAIL: fewer than 20 runs were killed part-way"; fail=1; }

# SIGTERM: stops after the current step with a final snapshot, exit 143.
"$TIERSIM" run cases/plummer.toml --backend cpu --set nbody.count=1024 --steps 100000 -q --out "$WORK/term" >/dev/null 2>&1 &
pid=$!
sleep 1.5
kill -TERM $pid
wait $pid; rc=$?
steps=$($PY $CHECK "$WORK/term") || { echo "FAIL: SIGTERM output unreadable"; fail=1; }
last=$(echo "$steps" | awk '{print $NF}')
if [ $rc -ne 143 ] || [ -z "$last" ] || [ "$last" -le 0 ] || ! grep -q '"interrupted": true' "$WORK/term/summary.json"; then
  echo "FAIL: SIGTERM: rc=$rc last snapshot step=$last"; fail=1
else
  echo "ok: SIGTERM stopped at step $last with a final snapshot"
fi

# NaN injection: caught at the next diagnostics, the last good snapshot kept.
out=$(TIERSIM_INJECT_NAN_AT_STEP=13 "$TIERSIM" run cases/plummer.toml "${ARGS[@]}" --out "$WORK/nan" 2>&1); rc=$?
steps=$($PY $CHECK "$WORK/nan")
if [ $rc -eq 0 ] || [[ "$out" != *"step 15: non-finite values in velocity"* ]] || [[ "$out" != *"last good snapshot at step 10"* ]] || [ "$steps" != "0 5 10" ]; then
  echo "FAIL: NaN injection: rc=$rc snapshots=[$steps] message: $out"; fail=1
else
  echo "ok: NaN injection caught: $out"
fi
exit $fail
