#!/usr/bin/env bash
# What must not damage a run or anything else on disk: --force on a directory that is not a
# tiersim run, restarts from a checkpoint that does not belong to the run or that would change
# it, and NaN reaching a checkpoint. Each refusal is one line "tiersim: error: ..." with a
# non-zero exit and leaves the directory exactly as it was (hashed before and after).
set -u
source "$(dirname "$0")/prologue.sh"
require_h5py
fail=0
NB=(cases/plummer.toml --backend cpu --set nbody.count=64 --set run.snapshot_every=5 --set run.diagnostics_every=5 -q)
HEAT=(cases/heat.toml --backend cpu --set run.dt=1e-4 --set run.snapshot_every=5 -q)

# Names and contents of every file and directory under $1.
dir_hash() {
  (cd "$1" && { find . | LC_ALL=C sort; find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum; } | sha256sum)
}

# refused <label> <expected substring> <dir to hash> <tiersim args...>: one error line naming
# the problem, a non-zero exit, and the directory unchanged.
refused() {
  local label=$1 expected=$2 dir=$3; shift 3
  local before after out rc lines
  before=$(dir_hash "$dir")
  out=$("$TIERSIM" "$@" 2>&1 >/dev/null); rc=$?
  after=$(dir_hash "$dir")
  lines=$(printf '%s\n' "$out" | grep -c .)
  if [ $rc -eq 0 ] || [[ "$out" != *"$expected"* ]] || [ "$lines" -ne 1 ] || [[ "$out" != "tiersim: error: "* ]] ||
     [ "$before" != "$after" ]; then
    echo "FAIL: $label: rc=$rc lines=$lines dir-unchanged=$([ "$before" = "$after" ] && echo yes || echo no)"
    echo "      expected: $expected"
    echo "      got:      $out"
    fail=1
  else
    echo "ok: $label: $out"
  fi
}

# ---- --force replaces only an empty directory or a tiersim run ----------------------------------

# A source tree: `--out . --force` there must delete nothing.
mkdir -p "$WORK/repo/src" "$WORK/repo/.git"
echo "# a project" > "$WORK/repo/README.md"; echo "int main() {}" > "$WORK/repo/src/main.cpp"; echo x > "$WORK/repo/.git/HEAD"
refused "--out . --force in a source tree" "not replaced: --force replaces only an empty directory or a tiersim run" \
  "$WORK/repo" run "$PWD/cases/plummer.toml" --backend cpu --set nbody.count=16 --steps 1 -q --out "$WORK/repo/." --force
(cd "$WORK/repo" && "$TIERSIM" run "$OLDPWD/cases/plummer.toml" --backend cpu --set nbody.count=16 --steps 1 -q --out . --force >/dev/null 2>&1)
if [ ! -f "$WORK/repo/README.md" ] || [ ! -f "$WORK/repo/src/main.cpp" ]; then echo "FAIL: --out . --force (cwd) deleted the tree"; fail=1; fi
# A home directory (HOME pointed at a scratch copy).
mkdir -p "$WORK/home/Documents"; echo notes > "$WORK/home/Documents/notes.txt"; echo "alias ll='ls -l'" > "$WORK/home/.bashrc"
refused "--out ~ --force" "which is not tiersim output" "$WORK/home" \
  run cases/plummer.toml --backend cpu --set nbody.count=16 --steps 1 -q --out "$WORK/home" --force
# A directory holding only a case file (tiersim's own name, but not a run).
mkdir -p "$WORK/caseonly"; cp cases/plummer.toml "$WORK/caseonly/case.toml"
refused "--force on a directory with only case.toml" "it holds no tiersim run (no .tiersim.lock)" "$WORK/caseonly" \
  run cases/plummer.toml --backend cpu --set nbody.count=16 --steps 1 -q --out "$WORK/caseonly" --force
# A tiersim run with a file of the user's beside it.
"$TIERSIM" run "${NB[@]}" --steps 5 --out "$WORK/run_plus" >/dev/null || { echo "FAIL: run_plus"; fail=1; }
echo "keep me" > "$WORK/run_plus/analysis.py"
refused "--force on a run with a user's file in it" "holds 'analysis.py'" "$WORK/run_plus" \
  run "${NB[@]}" --steps 5 --out "$WORK/run_plus" --force
# A snapshots.h5 that tiersim did not write (and no run beside it).
mkdir -p "$WORK/foreign_h5"
$PY -c "import h5py, sys; h5py.File(sys.argv[1], 'w').create_group('h5md')" "$WORK/foreign_h5/snapshots.h5"
refused "--force on someone else's snapshots.h5" "it holds no tiersim run (no .tiersim.lock)" "$WORK/foreign_h5" \
  run "${NB[@]}" --steps 5 --out "$WORK/foreign_h5" --force
# A tiersim run (rendered frames included) is replaced.
"$TIERSIM" run "${NB[@]}" --steps 5 --out "$WORK/rerun" >/dev/null || { echo "FAIL: rerun"; fail=1; }
mkdir -p "$WORK/rerun/frames"; touch "$WORK/rerun/frames/particles_00000.png"
if ! "$TIERSIM" run "${NB[@]}" --steps 10 --out "$WORK/rerun" --force >/dev/null 2>"$WORK/rerun.err" ||
   [ -e "$WORK/rerun/frames" ] || ! grep -q '"steps": 10' "$WORK/rerun/summary.json"; then
  echo "FAIL: --force on a tiersim run: $(cat "$WORK/rerun.err")"; fail=1
else
  echo "ok: --force replaces a tiersim run"
fi

# ---- No NaN in a checkpoint ---------------------------------------------------------------------

# step and "nan" if any array of DIR/checkpoint.h5 holds a non-finite value.
ckpt_state() {
  $PY - "$1/checkpoint.h5" <<'PYEOF'
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r") as f:
    bad = any(not np.isfinite(f["state"][k][()]).all() for k in f["state"])
    print(int(f.attrs["step"]), "nan" if bad else "finite")
PYEOF
}
# NaN at step 13 with a checkpoint every 7 steps (snapshots and diagnostics every 5): stopped at
# the checkpoint step 14, and the checkpoint of step 7 kept.
out=$(TIERSIM_INJECT_NAN_AT_STEP=13 "$TIERSIM" run "${NB[@]}" --steps 30 --set run.checkpoint_every=7 --out "$WORK/nan7" 2>&1); rc=$?
state=$(ckpt_state "$WORK/nan7")
if [ $rc -eq 0 ] || [[ "$out" != *"step 14: non-finite values in velocity"* ]] || [[ "$out" != *"last good snapshot at step 10"* ]] ||
   [ "$state" != "7 finite" ]; then
  echo "FAIL: NaN before a checkpoint step: rc=$rc checkpoint=[$state] message: $out"; fail=1
else
  echo "ok: NaN caught before the checkpoint of step 14, checkpoint of step 7 kept: $out"
fi
# After a restart from a checkpoint between snapshots (step 14; snapshots 0, 5, 10 kept), a NaN
# names the last snapshot in the index, not the checkpoint's step.
TIERSIM_INJECT_NAN_AT_STEP=15 "$TIERSIM" run "${NB[@]}" --steps 20 --set run.checkpoint_every=7 --out "$WORK/nan14" >/dev/null 2>&1
out=$(TIERSIM_INJECT_NAN_AT_STEP=14 "$TIERSIM" run --restart "$WORK/nan14" -q 2>&1); rc=$?
if [ "$(ckpt_state "$WORK/nan14")" != "14 finite" ] || [ $rc -eq 0 ] || [[ "$out" != *"step 15: non-finite values"* ]] ||
   [[ "$out" != *"last good snapshot at step 10"* ]]; then
  echo "FAIL: last good snapshot after a restart: rc=$rc message: $out"; fail=1
else
  echo "ok: last good snapshot after a restart: $out"
fi

# ---- A damaged checkpoint is refused before anything is touched ---------------------------------

# edit <run dir> <python statements on f = checkpoint.h5 opened r+, np = numpy>
edit_ckpt() {
  $PY - "$1/checkpoint.h5" "$2" <<'PYEOF'
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r+") as f:
    exec(sys.argv[2])
PYEOF
}
"$TIERSIM" run "${NB[@]}" --steps 10 --out "$WORK/nb" >/dev/null || { echo "FAIL: nbody run"; fail=1; }
"$TIERSIM" run "${HEAT[@]}" --set grid.n=16 --steps 10 --out "$WORK/heat16" >/dev/null || { echo "FAIL: heat run"; fail=1; }
"$TIERSIM" run cases/wave.toml --backend cpu --set grid.n=16 --set run.snapshot_every=5 -q --steps 10 --out "$WORK/wave" >/dev/null ||
  { echo "FAIL: wave run"; fail=1; }
damaged() {  # damaged <label> <expected> <run dir> <edit>
  rm -rf "$WORK/damaged"; cp -a "$3" "$WORK/damaged"
  edit_ckpt "$WORK/damaged" "$4"
  refused "$1" "$2" "$WORK/damaged" run --restart "$WORK/damaged" --steps 20 -q
}
damaged "a 3-value velocity" "checkpoint.h5: array 'velocity' holds 3 values; the case needs 192" "$WORK/nb" \
  'del f["state/velocity"]; f["state/velocity"] = np.zeros(3)'
damaged "a short acceleration" "array 'acceleration' holds 189 values" "$WORK/nb" \
  'a = f["state/acceleration"][:-3]; del f["state/acceleration"]; f["state/acceleration"] = a'
damaged "no mass" "no array 'mass'" "$WORK/nb" 'del f["state/mass"]'
damaged "a NaN mass" "mass[7] is not finite" "$WORK/nb" 'f["state/mass"][7] = np.nan'
damaged "a NaN position" "checkpoint.h5: non-finite values in position[5]" "$WORK/nb" 'f["state/position"][16] = np.nan'
damaged "an infinite velocity" "non-finite values in velocity[2]" "$WORK/nb" 'f["state/velocity"][6] = np.inf'
damaged "a NaN initial energy" "value 'initial_energy' is nan" "$WORK/nb" 'f["state"].attrs["initial_energy"] = np.nan'
damaged "no initial energy flag" "no value 'has_initial_energy'" "$WORK/nb" 'del f["state"].attrs["has_initial_energy"]'
damaged "a short heat field" "array 'field0' holds 4095 values; the case needs 4096 (a 16x16x16 grid)" "$WORK/heat16" \
  'a = f["state/field0"][:-1]; del f["state/field0"]; f["state/field0"] = a'
damaged "a NaN heat field" "non-finite values in u[100] (kernel stencil_heat_cpu)" "$WORK/heat16" 'f["state/field0"][100] = np.nan'
damaged "a NaN previous wave level" "non-finite values in u_prev[9] (kernel stencil_wave_cpu)" "$WORK/wave" 'f["state/field1"][9] = np.nan'
damaged "no wave field1" "no array 'field1'" "$WORK/wave" 'del f["state/field1"]'
damaged "a NaN stencil clock" "value 'time' is nan" "$WORK/wave" 'f["state"].attrs["time"] = np.nan'

# ---- A checkpoint of another run is refused before anything is touched --------------------------

"$TIERSIM" run "${HEAT[@]}" --set grid.n=24 --steps 10 --out "$WORK/heat24" >/dev/null || { echo "FAIL: heat24 run"; fail=1; }
"$TIERSIM" run "${NB[@]}" --steps 10 --precision fp64 --out "$WORK/nb64" >/dev/null || { echo "FAIL: fp64 run"; fail=1; }
"$TIERSIM" run "${NB[@]}" --steps 10 --set nbody.count=32 --out "$WORK/nb32" >/dev/null || { echo "FAIL: 32-body run"; fail=1; }
"$TIERSIM" run "${NB[@]}" --steps 10 --set run.dt=0.005 --out "$WORK/nbdt" >/dev/null || { echo "FAIL: dt run"; fail=1; }
foreign() {  # foreign <label> <expected> <run dir> <checkpoint from>
  rm -rf "$WORK/mixed"; cp -a "$3" "$WORK/mixed"; cp "$4/checkpoint.h5" "$WORK/mixed/checkpoint.h5"
  refused "$1" "$2" "$WORK/mixed" run --restart "$WORK/mixed" --steps 20 -q
}
# (A checkpoint names the parts of the state its step wrote, snapshots.d/part_*: it is checked
# against the run's step files before they are read.)
foreign "a 16^3 checkpoint in a 24^3 run" "grid.n = 16 in the checkpoint, 24 in its step files" "$WORK/heat24" "$WORK/heat16"
foreign "a wave checkpoint in an N-body run" "model stencil/wave in the checkpoint, nbody in its step files" "$WORK/nb" "$WORK/wave"
foreign "an N-body checkpoint in a heat run" "model nbody in the checkpoint, stencil/heat in its step files" "$WORK/heat16" "$WORK/nb"
foreign "an fp64 checkpoint in an fp32 run" 'strategy.precision = "fp64" in the checkpoint, "fp32" in its step files' "$WORK/nb" "$WORK/nb64"
foreign "a 32-body checkpoint in a 64-body run" "nbody.count = 32 in the checkpoint, 64 in its step files" "$WORK/nb" "$WORK/nb32"
foreign "a checkpoint of another dt" "run.dt = 0.005 in the checkpoint, 0.01 in its step files" "$WORK/nb" "$WORK/nbdt"

# A run under --no-snapshots wrote no checkpoint: its restart says so.
"$TIERSIM" run "${NB[@]}" --steps 4 --no-snapshots --out "$WORK/nosnap" >/dev/null 2>&1
refused "--restart of a --no-snapshots run" "no checkpoint.h5: the run wrote none (--no-snapshots, or a compare)" \
  "$WORK/nosnap" run --restart "$WORK/nosnap" --steps 8 -q

# ---- A restart continues the same run: only its length and output cadences may change ----------

cp -a "$WORK/nb" "$WORK/nb_keep"
refused "--set run.dt on a restart" "run.dt cannot change when a run continues (0.01 in its checkpoint, 0.005 asked)" "$WORK/nb" \
  run --restart "$WORK/nb" --steps 20 --set run.dt=0.005 -q
refused "--precision on a restart" 'strategy.precision cannot change when a run continues ("fp32" in its checkpoint, "fp64" asked)' \
  "$WORK/nb" run --restart "$WORK/nb" --steps 20 --precision fp64 -q
refused "--set nbody.count on a restart" "nbody.count cannot change" "$WORK/nb" run --restart "$WORK/nb" --set nbody.count=128 -q
refused "--layout on a restart" "strategy.layout cannot change" "$WORK/nb" run --restart "$WORK/nb" --steps 20 --layout aos -q
refused "--set run.seed on a restart" "run.seed cannot change" "$WORK/nb" run --restart "$WORK/nb" --steps 20 --set run.seed=7 -q
refused "--out with --restart" "--out cannot be used with --restart" "$WORK/nb" run --restart "$WORK/nb" --steps 20 --out "$WORK/elsewhere" -q
[ -e "$WORK/elsewhere" ] && { echo "FAIL: --out with --restart created $WORK/elsewhere"; fail=1; }
refused "--steps below the checkpoint" "the checkpoint is at step 10, past run.steps = 5" "$WORK/nb" run --restart "$WORK/nb" --steps 5 -q
# A run missing its step files fails in the index, and case.toml is not rewritten before that; a
# run missing the part of the state its checkpoint and last step file name, likewise.
rm -rf "$WORK/nostep"; cp -a "$WORK/nb" "$WORK/nostep"; rm -rf "$WORK/nostep/snapshots.d"
refused "a run without snapshots.d/" "no snapshots.d/" "$WORK/nostep" run --restart "$WORK/nostep" --steps 20 -q
rm -rf "$WORK/nopart"; cp -a "$WORK/nb" "$WORK/nopart"; rm "$WORK/nopart/snapshots.d/part_000000000010_r000000.h5"
refused "a run without its state's part" "snapshots.d/part_000000000010_r000000.h5: missing" "$WORK/nopart" \
  run --restart "$WORK/nopart" --steps 20 -q
# A finished run without more steps: nothing to do, exit 0, nothing rewritten (summary.json kept).
before=$(dir_hash "$WORK/nb")
out=$("$TIERSIM" run --restart "$WORK/nb" -q 2>&1); rc=$?
if [ $rc -ne 0 ] || [[ "$out" != *"nothing to do: the run is complete at step 10"* ]] || [ "$before" != "$(dir_hash "$WORK/nb")" ]; then
  echo "FAIL: restart of a finished run: rc=$rc unchanged=$([ "$before" = "$(dir_hash "$WORK/nb")" ] && echo yes || echo no) out: $out"; fail=1
else
  echo "ok: restart of a finished run: $out"
fi
# What a restart may change: its length, cadences and telemetry; repeating a stored value is fine.
if ! "$TIERSIM" run --restart "$WORK/nb" --steps 20 --set run.snapshot_every=2 --set run.diagnostics_every=2 \
     --set run.checkpoint_every=4 --set run.telemetry_every=2 --precision fp32 --backend cpu -q >/dev/null 2>"$WORK/allowed.err" ||
   ! grep -q '^steps = 20$' "$WORK/nb/case.toml" || ! grep -q '^snapshot_every = 2$' "$WORK/nb/case.toml" ||
   [ -e "$WORK/nb/case.toml.tmp" ] || [ "$($PY tests/integration/check_output_readable.py "$WORK/nb")" != "0 5 10 12 14 16 18 20" ]; then
  echo "FAIL: allowed restart overrides: $(cat "$WORK/allowed.err") snapshots: $($PY tests/integration/check_output_readable.py "$WORK/nb" 2>&1)"; fail=1
else
  echo "ok: a restart takes --steps, the output cadences and unchanged values"
fi

# ---- Physically absurd values: refused at step 0, before the output directory exists -----------

absurd() {  # absurd <label> <expected> <tiersim run args...>
  local label=$1 expected=$2; shift 2
  local out rc
  rm -rf "$WORK/absurd"
  out=$("$TIERSIM" run "$@" --out "$WORK/absurd" 2>&1 >/dev/null); rc=$?
  if [ $rc -eq 0 ] || [[ "$out" != *"$expected"* ]] || [ "$(printf '%s\n' "$out" | grep -c .)" -ne 1 ] || [ -e "$WORK/absurd" ]; then
    echo "FAIL: $label: rc=$rc out-dir-exists=$([ -e "$WORK/absurd" ] && echo yes || echo no) got: $out"; fail=1
  else
    echo "ok: $label: $out"
  fi
}
absurd "nbody.total_mass = 1e300" "step 0: non-finite values in velocity[0]" "${NB[@]}" --steps 3 --set nbody.total_mass=1e300
absurd "nbody.G = 1e308" "in the initial state; nothing was written" "${NB[@]}" --steps 3 --set nbody.G=1e308
absurd "nbody.radius = 1e-300" "in the initial state; nothing was written" "${NB[@]}" --steps 3 --set nbody.radius=1e-300
absurd "fp64 nbody.total_mass = 1e300" "non-finite values in the diagnostics" "${NB[@]}" --steps 3 --precision fp64 --set nbody.total_mass=1e300
absurd "run.dt = 1e308" "run.dt = 1e+308 over run.steps = 3 steps: the simulated time overflows" "${NB[@]}" --steps 3 --set run.dt=1e308
absurd "heat.amplitude = 1e39 in fp32" "step 0: non-finite values in u[" "${HEAT[@]}" --set grid.n=16 --steps 3 --set heat.amplitude=1e39

# ---- After a restart, steps/s and the closing line count the steps this process took -----------

"$TIERSIM" run cases/plummer.toml --backend cpu --set nbody.count=16 --steps 5000 --set run.snapshot_every=0 \
  --set run.diagnostics_every=5000 --set run.telemetry_every=1000 -q --out "$WORK/long" >/dev/null || { echo "FAIL: long run"; fail=1; }
out=$("$TIERSIM" run --restart "$WORK/long" --steps 5300 2>&1)
rate=$(printf '%s\n' "$out" | sed -n 's|^step 5300/5300 .*  \([0-9.e+-]*\) steps/s .*|\1|p')
steady=$(printf '%s\n' "$out" | sed -n 's|^finished 300 steps in .* s wall: \([0-9.e+-]*\) steps/s in the steady state.*(steps 5000 to 5300)$|\1|p')
# The progress line's rate cannot exceed the steady state's steps/s by much (the output's time
# only lowers it); counting from step 0 made it 5300/300 times too high.
if [ -z "$rate" ] || [ -z "$steady" ] || ! awk -v r="$rate" -v s="$steady" 'BEGIN { exit !(r <= 1.1 * s) }'; then
  echo "FAIL: progress after a restart: rate=$rate steps/s, steady state $steady steps/s; output:"; printf '%s\n' "$out" | grep -v '^ '; fail=1
else
  echo "ok: progress after a restart: $rate steps/s, steady state $steady steps/s, 300 steps (5000 to 5300)"
fi

exit $fail
