#!/usr/bin/env bash
# A restart from a damaged run: snapshots.h5 is derived (rebuilt from the step files and the
# checkpoint, never read), so damage there (four bytes of its global heap, which made HDF5 crash;
# an observable's step array overwritten, which went on silently) ends in the same files as a run
# never interrupted. Damage to what the restart does read (a step file up to the checkpoint cut
# short, missing, of another run or with a flipped byte; telemetry.csv cut short within what the
# checkpoint recorded, with a garbled row or a changed digit, or random bytes) is refused in one
# printable line naming the file, before anything in the directory changes.
set -u
source "$(dirname "$0")/prologue.sh"
require_h5py
fail=0
NB=(cases/plummer.toml --backend cpu --set nbody.count=64 --set run.snapshot_every=5 --set run.diagnostics_every=1 -q)

"$TIERSIM" run "${NB[@]}" --steps 30 --out "$WORK/ref" >/dev/null || { echo "FAIL: reference run"; exit 1; }
"$TIERSIM" run "${NB[@]}" --steps 15 --out "$WORK/base" >/dev/null || { echo "FAIL: run to step 15"; exit 1; }
"$TIERSIM" run "${NB[@]}" --steps 15 --set nbody.count=32 --out "$WORK/other" >/dev/null || { echo "FAIL: other run"; exit 1; }

tree_hash() { (cd "$1" && find . -printf '%p %y %l\n' | LC_ALL=C sort; find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum) | sha256sum; }
unprintable() {
  $PY -c '
import sys
t = sys.stdin.buffer.read().rstrip(b"\n").decode("utf-8", "replace")
sys.exit(0 if any(ord(c) < 32 or 0x7f <= ord(c) < 0xa0 or c == "\ufffd" for c in t) else 1)'
}
# "same" when the observables, the particle snapshots' steps and the last frame of $1 equal $2's.
same_as() {
  $PY - "$1" "$2" <<'PYEOF'
import sys, h5py, numpy as np
a, b = (h5py.File(d + "/snapshots.h5", "r") for d in sys.argv[1:3])
diff = []
if sorted(a["/observables"]) != sorted(b["/observables"]):
    diff.append("observable names")
for name in b["/observables"]:
    for k in ("step", "time", "value"):
        x, y = a["/observables"][name][k][()], b["/observables"][name][k][()]
        if x.shape != y.shape or not np.array_equal(x, y):
            diff.append("/observables/%s/%s" % (name, k))
for k in ("position/step", "position/time"):
    if not np.array_equal(a["/particles/all/" + k][()], b["/particles/all/" + k][()]):
        diff.append(k)
if not np.array_equal(a["/particles/all/position/value"][-1], b["/particles/all/position/value"][-1]):
    diff.append("last frame")
print("same" if not diff else "differs: " + ", ".join(diff))
PYEOF
}
# continues <label> <commands run in a copy of base>: the restart to step 30 ends as the reference.
continues() {
  rm -rf "$WORK/t"; cp -a "$WORK/base" "$WORK/t"
  (cd "$WORK/t" && eval "$2")
  local out rc
  out=$("$TIERSIM" run --restart "$WORK/t" --steps 30 -q 2>&1); rc=$?
  if [ $rc -ne 0 ]; then
    echo "FAIL: $1: restart rc=$rc: $(printf '%s' "$out" | head -c 300 | cat -v)"; fail=1; return
  fi
  local same
  same=$(same_as "$WORK/t" "$WORK/ref" 2>&1)
  if [ "$same" != "same" ] || ! $PY tests/integration/check_output_readable.py "$WORK/t" >/dev/null; then
    echo "FAIL: $1: the restarted run $same"; fail=1
  else
    echo "ok: $1: the restart ends as the uninterrupted run"
  fi
}
# refused <label> <expected> <commands run in a copy of base>
refused() {
  rm -rf "$WORK/t"; cp -a "$WORK/base" "$WORK/t"
  (cd "$WORK/t" && eval "$3")
  local before out rc
  before=$(tree_hash "$WORK/t")
  out=$("$TIERSIM" run --restart "$WORK/t" --steps 30 -q 2>&1 >/dev/null); rc=$?
  if [ $rc -eq 0 ] || [ $rc -ge 128 ] || [[ "$out" != *"$2"* ]] || [ "$(printf '%s\n' "$out" | grep -c .)" -ne 1 ] ||
     printf '%s' "$out" | unprintable || [ "$(tree_hash "$WORK/t")" != "$before" ]; then
    echo "FAIL: $1: rc=$rc unchanged=$([ "$(tree_hash "$WORK/t")" = "$before" ] && echo yes || echo no)"
    echo "      expected: $2"
    echo "      got:      $(printf '%s' "$out" | head -c 300 | cat -v)"
    fail=1
  else
    echo "ok: $1: $out"
  fi
}

# ---- snapshots.h5 is derived: damage there does not matter ------------------------------------
continues "four bytes of snapshots.h5's global heap" '$PY -c "
b = bytearray(open(\"snapshots.h5\", \"rb\").read()); at = b.find(b\"GCOL\") + 24
assert at > 24; b[at:at + 4] = b\"\xff\xff\xff\x7f\"; open(\"snapshots.h5\", \"wb\").write(b)"'
continues "an observable's step array overwritten in snapshots.h5" '$PY -c "
import h5py
with h5py.File(\"snapshots.h5\", \"r+\") as f:
    g = f[\"/observables\"][sorted(f[\"/observables\"])[0]]; g[\"step\"][...] = 7"'
continues "snapshots.h5 and snapshots.xmf deleted" 'rm snapshots.h5 snapshots.xmf'
continues "snapshots.h5 random bytes" 'head -c 60000 /dev/urandom > snapshots.h5'
# The rows appended after the last checkpoint (its own output's) are not what it recorded: a row
# torn there, as by a kill, is dropped.
continues "telemetry.csv's last row torn after the checkpoint" 'truncate -s -20 telemetry.csv'

# ---- What the restart reads: damage is refused, nothing changes -------------------------------
refused "a step file before the checkpoint cut short" "snapshots.d/step_000000000010.h5: cannot open as HDF5" \
  'truncate -s -100 snapshots.d/step_000000000010.h5'
refused "a step file before the checkpoint missing" "snapshots.d/step_000000000005.h5: missing" 'rm snapshots.d/step_000000000005.h5'
refused "a step file of another run" "snapshots.d/step_000000000010.h5: of another run" \
  'cp ../other/snapshots.d/step_000000000010.h5 snapshots.d/'
refused "a flipped byte in a step file's observables" "snapshots.d/step_000000000010.h5: " '$PY -c "
import h5py
with h5py.File(\"snapshots.d/step_000000000010.h5\", \"r\") as f:
    g = f[\"/observables\"][sorted(f[\"/observables\"])[0]]
    at = g[\"value\"].id.get_chunk_info(0).byte_offset
b = bytearray(open(\"snapshots.d/step_000000000010.h5\", \"rb\").read()); b[at + 3] ^= 0x10
open(\"snapshots.d/step_000000000010.h5\", \"wb\").write(b)"'
refused "a stray step file before the checkpoint" "snapshots.d/step_000000000012.h5: a step file up to the checkpoint" \
  'cp snapshots.d/step_000000000010.h5 snapshots.d/step_000000000012.h5'
refused "telemetry.csv cut short" "telemetry.csv: " 'truncate -s $(($(stat -c %s telemetry.csv) / 2)) telemetry.csv'
refused "telemetry.csv with a garbled row" "telemetry.csv:5: not a telemetry row" 'sed -i "5s/,/;/g" telemetry.csv'
refused "telemetry.csv with a changed digit" "telemetry.csv: its first" '$PY -c "
lines = open(\"telemetry.csv\").read().split(\"\n\"); f = lines[4].split(\",\")
f[4] = str(int(f[4]) + 1); lines[4] = \",\".join(f); open(\"telemetry.csv\", \"w\").write(\"\n\".join(lines))"'
refused "telemetry.csv of random bytes" "telemetry.csv:1: not tiersim's telemetry header" \
  'head -c 4096 /dev/urandom > telemetry.csv'
refused "telemetry.csv missing" "telemetry.csv: missing" 'rm telemetry.csv'

# ---- A checkpoint between snapshots: the observables since the last snapshot come from it -----
# NaN at step 13 stops the run; the last checkpoint is step 7 (snapshots at 0 and 5).
rm -rf "$WORK/nan"
TIERSIM_INJECT_NAN_AT_STEP=13 "$TIERSIM" run "${NB[@]}" --steps 30 --set run.checkpoint_every=7 --out "$WORK/nan" >/dev/null 2>&1
at=$($PY -c "import h5py, sys; print(int(h5py.File(sys.argv[1], 'r').attrs['step']))" "$WORK/nan/checkpoint.h5")
if ! "$TIERSIM" run --restart "$WORK/nan" -q >/dev/null 2>"$WORK/nan.err"; then
  echo "FAIL: restart from the checkpoint of step $at: $(cat "$WORK/nan.err")"; fail=1
elif [ "$(same_as "$WORK/nan" "$WORK/ref")" != "same" ]; then
  echo "FAIL: restart from the checkpoint of step $at between snapshots: $(same_as "$WORK/nan" "$WORK/ref")"; fail=1
else
  echo "ok: restart from the checkpoint of step $at between snapshots ends as the uninterrupted run"
fi
exit $fail
