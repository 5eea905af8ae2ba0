#!/usr/bin/env bash
# Nothing outside the run touched, nothing of the user's lost: --force deletes only the files
# tiersim and its scripts write (by exact name or step pattern, in every subdirectory they own) and
# refuses, deleting nothing, when anything else is anywhere in the tree; a restart deletes none of
# the user's files either; a second process is refused in one line while a run holds the
# directory, and a run killed with -9 leaves no stale lock.
set -u
source "$(dirname "$0")/prologue.sh"
require_h5py
fail=0
NB=(cases/plummer.toml --backend cpu --set nbody.count=32 --set run.snapshot_every=2 --set run.diagnostics_every=2 -q)
VTK=(); "$TIERSIM" info | grep -q "VTK output on" && VTK=(--format xdmf,vtk)

# Names, types and contents of everything under $1 (links as links).
tree_hash() { (cd "$1" && find . -printf '%p %y %l\n' | LC_ALL=C sort; find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum) | sha256sum; }

# refused <label> <expected> <dir> <tiersim args...>: one line, non-zero, the tree of <dir> unchanged.
refused() {
  local label=$1 expected=$2 dir=$3; shift 3
  local before out rc
  before=$(tree_hash "$dir")
  out=$("$TIERSIM" "$@" 2>&1 >/dev/null); rc=$?
  if [ $rc -eq 0 ] || [[ "$out" != *"$expected"* ]] || [ "$(printf '%s\n' "$out" | grep -c .)" -ne 1 ] ||
     [ "$(tree_hash "$dir")" != "$before" ]; then
    echo "FAIL: $label: rc=$rc unchanged=$([ "$(tree_hash "$dir")" = "$before" ] && echo yes || echo no)"
    echo "      expected: $expected"
    echo "      got:      $out"
    fail=1
  else
    echo "ok: $label: $out"
  fi
}

# A complete run with everything tiersim and its scripts put there: VTK files, frames and movies
# (scripts/render's names), charts (scripts/plot's), and the .tmp files of a killed write.
"$TIERSIM" run "${NB[@]}" --steps 4 "${VTK[@]}" --out "$WORK/run" >/dev/null || { echo "FAIL: the first run"; exit 1; }
mkdir -p "$WORK/run/frames"
for f in particles_00000.png particles_00001.png particles.mp4 u_00000.png; do echo png > "$WORK/run/frames/$f"; done
echo png > "$WORK/run/bandwidth.png"; echo png > "$WORK/run/roofline.png"
echo half > "$WORK/run/snapshots.d/step_000000000006.h5.tmp"; echo half > "$WORK/run/summary.json.tmp"
[ ${#VTK[@]} -gt 0 ] && echo half > "$WORK/run/vtk/particles_000000000006.vtp.tmp"

# ---- --force refuses a tree holding anything that is not tiersim's, and deletes nothing --------
planted() {  # planted <label> <expected> <setup commands run in the copy>
  rm -rf "$WORK/p"; cp -a "$WORK/run" "$WORK/p"
  (cd "$WORK/p" && eval "$3")
  refused "$1" "$2" "$WORK/p" run "${NB[@]}" --steps 2 --out "$WORK/p" --force
}
planted "a note in snapshots.d/" "it holds 'snapshots.d/notes.txt', which is not tiersim output" 'echo mine > snapshots.d/notes.txt'
planted "a thesis in frames/" "it holds 'frames/thesis.tex', which is not tiersim output" 'echo mine > frames/thesis.tex'
planted "a look-alike in frames/" "it holds 'frames/holiday_00001.png'" 'echo mine > frames/holiday_00001.png'
planted "a source tree in vtk/" "it holds 'vtk/src', which is not tiersim output" 'mkdir -p vtk/src && echo "int x;" > vtk/src/x.c'
planted "a subdirectory with a step file's name" "it holds 'snapshots.d/step_000000000008.h5', a directory" \
  'mkdir snapshots.d/step_000000000008.h5 && echo mine > snapshots.d/step_000000000008.h5/data'
planted "summary.json a link" "it holds 'summary.json', a symbolic link" 'rm summary.json && ln -s /etc/hostname summary.json'
planted "frames/ a link" "it holds 'frames', a symbolic link" 'rm -rf frames && ln -s /tmp frames'
planted "a step file a link" "it holds 'snapshots.d/step_000000000002.h5', a symbolic link" \
  'rm snapshots.d/step_000000000002.h5 && ln -s /etc/hostname snapshots.d/step_000000000002.h5'
planted "a hidden file" "it holds '.notes', which is not tiersim output" 'echo mine > .notes'
planted "a FIFO named telemetry.csv" "it holds 'telemetry.csv', not a regular file" 'rm telemetry.csv && mkfifo telemetry.csv'
# Not a run at all, though every name is one tiersim writes.
mkdir -p "$WORK/mine/snapshots.d" "$WORK/mine/vtk/src"
echo data > "$WORK/mine/snapshots.d/mydata.bin"; echo "int x;" > "$WORK/mine/vtk/src/main.c"
refused "snapshots.d/mydata.bin and vtk/src/" "it holds 'snapshots.d/mydata.bin'" "$WORK/mine" \
  run "${NB[@]}" --steps 2 --out "$WORK/mine" --force
mkdir -p "$WORK/names"; cp cases/plummer.toml "$WORK/names/case.toml"; echo '{}' > "$WORK/names/summary.json"
echo "a,b" > "$WORK/names/telemetry.csv"; mkdir "$WORK/names/snapshots.d"
refused "tiersim's names but no run" "it holds no tiersim run (no .tiersim.lock)" "$WORK/names" \
  run "${NB[@]}" --steps 2 --out "$WORK/names" --force

# ---- What is tiersim's is replaced: every file of the old run goes, subdirectories included -------
rm -rf "$WORK/p"; cp -a "$WORK/run" "$WORK/p"
if ! "$TIERSIM" run "${NB[@]}" --steps 2 --out "$WORK/p" --force >/dev/null 2>"$WORK/p.err"; then
  echo "FAIL: --force on a complete run: $(cat "$WORK/p.err")"; fail=1
elif [ -e "$WORK/p/frames" ] || [ -e "$WORK/p/vtk" ] || [ -e "$WORK/p/bandwidth.png" ] || [ -e "$WORK/p/summary.json.tmp" ] ||
     [ -e "$WORK/p/snapshots.d/step_000000000004.h5" ] || ! grep -q '"steps": 2' "$WORK/p/summary.json"; then
  echo "FAIL: --force left files of the old run: $(cd "$WORK/p" && find . | sort | tr '\n' ' ')"; fail=1
else
  echo "ok: --force replaces a complete run (frames, VTK, charts, .tmp files and all)"
fi

# ---- A restart deletes nothing of the user's, wherever it sits in the run -----------------------
rm -rf "$WORK/u"; cp -a "$WORK/run" "$WORK/u"
mkdir -p "$WORK/u/vtk/src" "$WORK/u/notes"
for f in notes.txt snapshots.d/notes.txt snapshots.d/step_1.h5.bak frames/thesis.tex vtk/src/x.c notes/n.txt analysis.py; do
  echo "mine: $f" > "$WORK/u/$f"
done
before=$(cd "$WORK/u" && sha256sum notes.txt snapshots.d/notes.txt snapshots.d/step_1.h5.bak frames/thesis.tex vtk/src/x.c notes/n.txt analysis.py)
if ! "$TIERSIM" run --restart "$WORK/u" --steps 8 "${VTK[@]}" -q >/dev/null 2>"$WORK/u.err"; then
  echo "FAIL: restart of a run with the user's files in it: $(cat "$WORK/u.err")"; fail=1
elif [ "$(cd "$WORK/u" && sha256sum notes.txt snapshots.d/notes.txt snapshots.d/step_1.h5.bak frames/thesis.tex vtk/src/x.c notes/n.txt analysis.py 2>&1)" != "$before" ]; then
  echo "FAIL: a restart changed or deleted the user's files"; fail=1
else
  echo "ok: a restart keeps the user's files in every subdirectory"
fi

# ---- One process at a time ---------------------------------------------------------------------
LONG=(run cases/plummer.toml --backend cpu --set nbody.count=256 --steps 1000000 --set run.snapshot_every=50 -q)
"$TIERSIM" "${LONG[@]}" --out "$WORK/busy" >/dev/null 2>&1 &
pid=$!
for _ in $(seq 1 3000); do [ -f "$WORK/busy/checkpoint.h5" ] && break; sleep 0.01; done
in_use() {  # in_use <label> <tiersim args...>: refused naming the running process, never "use --force"
  local label=$1; shift
  local out rc
  out=$("$TIERSIM" "$@" 2>&1 >/dev/null); rc=$?
  if [ $rc -eq 0 ] || [[ "$out" != *"in use by another tiersim process (pid $pid)"* ]] || [[ "$out" == *"use --force"* ]] ||
     [ "$(printf '%s\n' "$out" | grep -c .)" -ne 1 ]; then
    echo "FAIL: $label: rc=$rc: $out"; fail=1
  else
    echo "ok: $label: $out"
  fi
}
in_use "a second run into a running run" run "${NB[@]}" --steps 2 --out "$WORK/busy"
in_use "--force into a running run" run "${NB[@]}" --steps 2 --out "$WORK/busy" --force
in_use "--restart of a running run" run --restart "$WORK/busy" -q
kill -0 $pid 2>/dev/null || { echo "FAIL: the running run ended"; fail=1; }
# kill -9: the kernel releases the lock with the process; the run continues from its checkpoint.
kill -9 $pid; wait $pid 2>/dev/null
at=$($PY -c "import h5py, sys; print(int(h5py.File(sys.argv[1], 'r').attrs['step']))" "$WORK/busy/checkpoint.h5")
if ! "$TIERSIM" run --restart "$WORK/busy" --steps $((at + 10)) -q >/dev/null 2>"$WORK/busy.err"; then
  echo "FAIL: restart after kill -9: $(cat "$WORK/busy.err")"; fail=1
else
  echo "ok: kill -9 leaves no stale lock: the restart runs"
fi

# Races: two processes at once into the same directory. One runs; the other is refused as in use
# (or, once the first has finished, as a run to replace): never both, and the loser of a --force
# race is not told to use --force.
for trial in 1 2 3; do
  for mode in fresh force; do
    d="$WORK/race_${mode}_$trial"; rm -rf "$d"
    extra=()
    if [ $mode = force ]; then "$TIERSIM" run "${NB[@]}" --steps 2 --out "$d" >/dev/null; extra=(--force); fi
    "$TIERSIM" "${LONG[@]}" --out "$d" "${extra[@]}" >/dev/null 2>"$d.a" & a=$!
    "$TIERSIM" "${LONG[@]}" --out "$d" "${extra[@]}" >/dev/null 2>"$d.b" & b=$!
    # Until one of them has given up (both set up first, then meet at the directory), 60 s at most.
    for _ in $(seq 1 600); do kill -0 $a 2>/dev/null && kill -0 $b 2>/dev/null || break; sleep 0.1; done
    sleep 0.5
    running=0; for p in $a $b; do kill -0 $p 2>/dev/null && running=$((running + 1)); done
    kill -9 $a $b 2>/dev/null; wait $a $b 2>/dev/null
    errs=$(cat "$d.a" "$d.b")
    if [ $running -ne 1 ] || [[ "$errs" != *"in use by another tiersim process"* ]] || [[ "$errs" == *"use --force"* ]]; then
      echo "FAIL: race ($mode, $trial): $running running; stderr: $errs"; fail=1
    else
      echo "ok: race ($mode, $trial): one runs, the other: $errs"
    fi
  done
done
exit $fail
