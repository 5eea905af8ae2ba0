#!/usr/bin/env bash
# tiersim compare: every combination runs (or is reported as not run), the per-kernel table has
# one row per combination with the speedup against the first, compare.csv and compare.png appear.
set -u
source "$(dirname "$0")/prologue.sh"
fail=0
out=$("$TIERSIM" compare cases/plummer.toml --backend cpu --layout aos,soa,float4 --steps 3 --warmup 1 \
      --set nbody.count=256 --out "$WORK/c" 2>&1); rc=$?
echo "$out"
[ $rc -eq 0 ] || { echo "FAIL: compare exited $rc"; fail=1; }
for k in nbody_forces nbody_kick nbody_drift; do
  rows=$(echo "$out" | awk -v k="$k" '$0 == k {on=1; next} on && /^$/ {on=0} on && /layout=/ {n++} END {print n+0}')
  [ "$rows" -eq 3 ] || { echo "FAIL: $k has $rows rows, expected 3"; fail=1; }
done
echo "$out" | grep -q "layout=aos .* 1.00x" || { echo "FAIL: first combination is not the 1.00x baseline"; fail=1; }
lines=$(grep -c ",nbody_forces," "$WORK/c/compare.csv")
[ "$lines" -eq 3 ] || { echo "FAIL: compare.csv has $lines force rows"; fail=1; }
if /usr/bin/python3 -c "import matplotlib" 2>/dev/null; then
  [ -s "$WORK/c/compare.png" ] || { echo "FAIL: compare.png missing"; fail=1; }
fi
# A combination that cannot run is reported, the others still run.
out=$("$TIERSIM" compare cases/plummer.toml --backend cpu,cuda --steps 2 --warmup 1 --set nbody.count=128 \
      --out "$WORK/d" --no-chart 2>&1); rc=$?
if "$TIERSIM" info | grep -q "GPU: none usable"; then
  echo "$out" | grep -q "not run: backend=cuda" || { echo "FAIL: the cuda combination was not reported"; echo "$out"; fail=1; }
  [ $rc -eq 0 ] || { echo "FAIL: one runnable combination should give exit 0"; fail=1; }
  # None runnable: exit 1, and perf-tables says so from the CSV (no traceback).
  "$TIERSIM" compare cases/plummer.toml --backend cuda --steps 2 --warmup 1 --set nbody.count=128 --out "$WORK/e" \
    --no-chart >/dev/null 2>&1; rc=$?
  tables=$(scripts/perf-tables "$WORK/e/compare.csv" 2>&1)
  if [ $rc -eq 1 ] && [[ "$tables" == "no combination ran"*"not run: backend=cuda: "* ]]; then
    echo "ok: a compare where nothing ran exits 1, and perf-tables says so"
  else echo "FAIL: compare with nothing runnable: exit $rc, perf-tables: $tables"; fail=1; fi
fi
# No combination ran (a grid too large for host memory): no chart is attempted, and the run says why.
out=$("$TIERSIM" compare cases/heat.toml --backend cpu --steps 2 --warmup 1 --set grid.n=100000 --set stencil.force=true \
      --out "$WORK/none" 2>&1); rc=$?
if [ $rc -eq 1 ] && echo "$out" | grep -qx "chart: not drawn (no combination ran)" && [ ! -e "$WORK/none/compare.png" ]; then
  echo "ok: no chart where no combination ran"
else echo "FAIL: compare with nothing run: exit $rc: $out"; fail=1; fi
# Combinations that run the same kernels run once: the CPU backend has one stencil kernel whatever
# the tiling, so tiling=shared is reported as the same kernels as tiling=none, and not run again.
out=$("$TIERSIM" compare cases/heat.toml --backend cpu --tiling none,shared --steps 2 --warmup 1 --set grid.n=16 \
      --out "$WORK/same" --no-chart 2>&1); rc=$?
if [ $rc -eq 0 ] && echo "$out" | grep -q "^not run again: backend=cpu tiling=shared: the same kernels as backend=cpu tiling=none" &&
  [ "$(grep -c '^"backend=cpu tiling=none",cpu/fp32,stencil_heat_cpu,' "$WORK/same/compare.csv")" -eq 1 ] &&
  [ "$(grep -c '^"backend=cpu tiling=shared",.*the same kernels as backend=cpu tiling=none' "$WORK/same/compare.csv")" -eq 1 ] &&
  [ ! -e "$WORK/same/backend-cpu_tiling-shared" ]; then echo "ok: combinations with the same kernels run once"
else echo "FAIL: compare --backend cpu --tiling none,shared (exit $rc):"; echo "$out"; cat "$WORK/same/compare.csv"; fail=1; fi
# scripts/perf-tables lists such a combination under the table, not as a row of no kernel.
tables=$(scripts/perf-tables "$WORK/same/compare.csv" 2>&1)
if [[ "$tables" == *$'\n'"not run: backend=cpu tiling=shared: the same kernels as backend=cpu tiling=none"* ]] &&
  [[ "$tables" != *'| `` |'* ]]; then echo "ok: perf-tables lists the combination not run under the table"
else echo "FAIL: perf-tables of $WORK/same/compare.csv:"; echo "$tables"; fail=1; fi
# A case key wrong for every combination: one line, exit 1, and no output directory (not a
# table of combinations that were not run).
out=$("$TIERSIM" compare cases/heat.toml --backend cpu --set grid.n=0 --out "$WORK/bad" 2>&1); rc=$?
if [ $rc -eq 1 ] && [ "$(printf '%s\n' "$out" | grep -c .)" -eq 1 ] && [[ "$out" == *"--set grid.n: 0 is out of range"* ]] &&
  [ ! -e "$WORK/bad" ]; then echo "ok: a bad --set is refused in one line"
else echo "FAIL: compare --set grid.n=0: rc=$rc, output dir $([ -e "$WORK/bad" ] && echo made || echo not made): $out"; fail=1; fi
# --force replaces an earlier compare, but never a directory holding anything else.
"$TIERSIM" compare cases/plummer.toml --backend cpu --layout aos --steps 2 --warmup 1 --set nbody.count=64 \
  --out "$WORK/c" --no-chart --force >/dev/null 2>&1 || { echo "FAIL: --force did not replace an earlier compare"; fail=1; }
[ ! -d "$WORK/c/layout-soa" ] || { echo "FAIL: the replaced compare kept old runs"; ls "$WORK/c"; fail=1; }
mkdir -p "$WORK/mine" && echo keep >"$WORK/mine/notes.txt"
out=$("$TIERSIM" compare cases/plummer.toml --backend cpu --steps 2 --warmup 1 --set nbody.count=64 \
      --out "$WORK/mine" --no-chart --force 2>&1); rc=$?
[ $rc -ne 0 ] && [ -f "$WORK/mine/notes.txt" ] && [ "$(ls "$WORK/mine")" = notes.txt ] ||
  { echo "FAIL: compare --force replaced a directory that is not compare output (exit $rc)"; fail=1; }
echo "$out" | grep -q "not replaced.*notes.txt" || { echo "FAIL: message does not name notes.txt: $out"; fail=1; }
exit $fail
