#!/usr/bin/env bash
# SIGTERM at any moment ends a run cleanly: before anything is written, one line and no output
# directory; once the run has started, exit 143 with the snapshot, the checkpoint and summary.json
# all of the same final step (a signal during a step's diagnostics used to end with summary.json
# at that step but the last snapshot and checkpoint far behind; a signal in the first half second
# used to end the process silently, leaving an empty directory).
set -u
source "$(dirname "$0")/prologue.sh"
require_h5py
CHECK=tests/integration/check_output_readable.py
fail=0

# "consistent S" when summary.json, checkpoint.h5 and the last snapshot all end at step S (and the
# output reads back), else what differs.
final_state() {
  $PY - "$1" <<'PYEOF'
import json, sys, h5py
d = sys.argv[1]
try:
    s = json.load(open(d + "/summary.json"))
    with h5py.File(d + "/checkpoint.h5", "r") as f:
        c = int(f.attrs["step"])
    with h5py.File(d + "/snapshots.h5", "r") as f:
        p = int(f["/particles/all/position/step"][-1])
except Exception as e:  # noqa: BLE001
    print("unreadable: %s" % e); sys.exit()
if s["steps"] == c == p:
    print("consistent %d interrupted=%s" % (c, str(s["interrupted"]).lower()))
else:
    print("summary at %d, checkpoint at %d, last snapshot at %d" % (s["steps"], c, p))
PYEOF
}

# stopped <label> <dir> <rc> <stderr>: exit 143 and either no directory and one line saying nothing
# was written, or a directory whose snapshot, checkpoint and summary end at the same step.
stopped() {
  local label=$1 dir=$2 rc=$3 err=$4 state
  if [ $rc -ne 143 ]; then
    echo "FAIL: $label: rc=$rc (expected 143): $err"; fail=1; return
  fi
  if [ ! -e "$dir" ]; then
    if [[ "$err" != *"tiersim: stopped by SIGTERM before the run started; nothing was written"* ]]; then
      echo "FAIL: $label: no directory, and no line saying so (stderr: '$err')"; fail=1
    else
      echo "ok: $label: stopped before the run started, nothing written"
    fi
    return
  fi
  state=$(final_state "$dir")
  if [[ "$state" != "consistent "*" interrupted=true" ]] || ! $PY $CHECK "$dir" >/dev/null 2>&1; then
    echo "FAIL: $label: $state; directory: $(ls -A "$dir" | tr '\n' ' ')"; fail=1
  else
    echo "ok: $label: $state"
  fi
}

NB=(cases/plummer.toml --backend cpu --set nbody.count=64 --set run.snapshot_every=10 --set run.diagnostics_every=1 -q)

# A signal inside the diagnostics of step 7, after the step decided it was not the last one.
rm -rf "$WORK/diag"
err=$(TIERSIM_TEST_SIGNAL_AT=diagnostics:7 "$TIERSIM" run "${NB[@]}" --steps 40 --out "$WORK/diag" 2>&1 >/dev/null); rc=$?
stopped "SIGTERM during the diagnostics of step 7" "$WORK/diag" $rc "$err"
# The same on a restart from a checkpoint between snapshots.
"$TIERSIM" run "${NB[@]}" --steps 13 --set run.checkpoint_every=3 --out "$WORK/again" >/dev/null 2>&1
err=$(TIERSIM_TEST_SIGNAL_AT=diagnostics:14 "$TIERSIM" run --restart "$WORK/again" --steps 40 -q 2>&1 >/dev/null); rc=$?
stopped "SIGTERM during a restart's diagnostics" "$WORK/again" $rc "$err"

# Signals while the output thread writes (output runs behind the steps): SIGTERM between step 20's
# snapshot and its checkpoint ends the run at the next step boundary with everything consistent;
# SIGKILL there leaves a run that reads back and that --restart finishes exactly as a run never
# interrupted (final checkpoint arrays equal).
rm -rf "$WORK/wterm"
# (400 steps: with two output slots the loop is at most two snapshots ahead of the writer.)
err=$(TIERSIM_TEST_SIGNAL_AT=writing:20 "$TIERSIM" run "${NB[@]}" --steps 400 --out "$WORK/wterm" 2>&1 >/dev/null); rc=$?
stopped "SIGTERM while the output thread writes step 20" "$WORK/wterm" $rc "$err"
rm -rf "$WORK/wkill" "$WORK/wref"
"$TIERSIM" run "${NB[@]}" --steps 40 --out "$WORK/wref" >/dev/null 2>&1
{ TIERSIM_TEST_SIGNAL_AT=writing:20:KILL "$TIERSIM" run "${NB[@]}" --steps 40 --out "$WORK/wkill" >/dev/null; rc=$?; } 2>/dev/null
if [ $rc -ne 137 ]; then
  echo "FAIL: SIGKILL while the output thread writes: rc=$rc (expected 137)"; fail=1
elif ! $PY $CHECK "$WORK/wkill" >/dev/null 2>&1; then
  echo "FAIL: SIGKILL while the output thread writes: the run does not read back"; fail=1
elif ! "$TIERSIM" run --restart "$WORK/wkill" -q >/dev/null 2>&1; then
  echo "FAIL: SIGKILL while the output thread writes: --restart failed"; fail=1
else
  same=$($PY - "$WORK/wkill" "$WORK/wref" <<'PYEOF'
import sys, h5py, numpy as np
a, b = (h5py.File(d + "/checkpoint.h5", "r") for d in sys.argv[1:3])
ok = int(a.attrs["step"]) == int(b.attrs["step"]) == 40 and sorted(a["state"]) == sorted(b["state"]) and all(
    np.array_equal(a["state"][k][()], b["state"][k][()]) for k in b["state"])
print("same" if ok else "differs: steps %d vs %d" % (int(a.attrs["step"]), int(b.attrs["step"])))
PYEOF
)
  if [ "$same" = same ]; then
    echo "ok: SIGKILL while the output thread writes step 20: reads back; the restart ends as the uninterrupted run"
  else
    echo "FAIL: SIGKILL while the output thread writes: after the restart, $same"; fail=1
  fi
fi

# A signal while the case is set up, before anything is written: one line, no directory.
rm -rf "$WORK/setup"
err=$(TIERSIM_TEST_SIGNAL_AT=setup "$TIERSIM" run "${NB[@]}" --steps 40 --out "$WORK/setup" 2>&1 >/dev/null); rc=$?
stopped "SIGTERM during set-up" "$WORK/setup" $rc "$err"

# Real signals in the first half second, and at random moments of a run of 1024 bodies with
# diagnostics at every step once it is stepping. "Start" is when main() has installed its handlers
# (SIGTERM in the SigCgt mask of /proc/PID/status): no program can handle a signal that arrives
# while the dynamic loader is still mapping its libraries. (A build that installs them late is
# waited for 3 s at most, then signalled anyway.)
term_at() {  # term_at <label> <seconds> <after: exec|stepping> <dir> <tiersim args...>
  local label=$1 delay=$2 after=$3 dir=$4; shift 4
  rm -rf "$dir"
  "$TIERSIM" "$@" --out "$dir" >/dev/null 2>"$dir.err" &
  local pid=$!
  for _ in $(seq 1 1500); do
    mask=$(sed -n 's/^SigCgt:[[:space:]]*//p' "/proc/$pid/status" 2>/dev/null)
    [ -n "$mask" ] && (( 0x$mask & 0x4000 )) && break
    kill -0 $pid 2>/dev/null || break
    sleep 0.002
  done
  if [ "$after" = stepping ]; then
    for _ in $(seq 1 3000); do [ -f "$dir/checkpoint.h5" ] || ! kill -0 $pid 2>/dev/null && break; sleep 0.01; done
  fi
  sleep "$delay"
  kill -TERM $pid 2>/dev/null
  wait $pid; local rc=$?
  stopped "$label" "$dir" $rc "$(cat "$dir.err")"
}
BIG=(run cases/plummer.toml --backend cpu --set nbody.count=1024 --steps 100000 --set run.diagnostics_every=1
     --set run.snapshot_every=1000 -q)
for delay in 0 0.1 0.4; do term_at "SIGTERM ${delay}s after start" "$delay" exec "$WORK/early_$delay" "${BIG[@]}"; done
for trial in 1 2 3 4 5; do
  term_at "SIGTERM at a random moment of the steps ($trial)" "$(awk -v s="$RANDOM" 'BEGIN { srand(s); printf "%.3f", rand() }')" \
    stepping "$WORK/random_$trial" "${BIG[@]}"
done
exit $fail
