#!/usr/bin/env bash
# The README's first command in miniature: the default case runs and writes its files, and the
# second run into the same directory is refused unless --force.
set -eu
source "$(dirname "$0")/prologue.sh"

"$TIERSIM" --version
"$TIERSIM" info
"$TIERSIM" run cases/plummer.toml --backend cpu --steps 20 --set nbody.count=512 --out "$WORK/p" | tee "$WORK/log"
for f in snapshots.h5 snapshots.xmf telemetry.csv summary.json case.toml; do
  test -s "$WORK/p/$f" || { echo "FAIL: $f missing"; exit 1; }
done
grep -q "output: $WORK/p" "$WORK/log"
grep -q "count = 512" "$WORK/p/case.toml"
# One rank exchanges nothing: its summary names no transport.
grep -q '"ranks": 1,' "$WORK/p/summary.json" && grep -q '"transport": "none",' "$WORK/p/summary.json" ||
  { echo "FAIL: summary.json of one rank: $(grep -E '"(ranks|transport)"' "$WORK/p/summary.json")"; exit 1; }
if "$TIERSIM" run cases/plummer.toml --backend cpu --steps 2 --out "$WORK/p" 2>"$WORK/err"; then
  echo "FAIL: overwrote without --force"; exit 1
fi
grep -q "use --force" "$WORK/err"
"$TIERSIM" run cases/plummer.toml --backend cpu --steps 2 --out "$WORK/p" --force --quiet
# Every case in cases/ parses and runs a few steps on the CPU.
for c in cases/*.toml; do
  "$TIERSIM" run "$c" --backend cpu --steps 3 --out "$WORK/all/$(basename "$c" .toml)" --quiet --force \
    --set run.snapshot_every=0 || { echo "FAIL: $c"; exit 1; }
done
# scripts/plot draws the telemetry (where Debian's matplotlib is installed).
if /usr/bin/python3 -c "import matplotlib" 2>/dev/null; then
  /usr/bin/python3 scripts/plot telemetry "$WORK/p/telemetry.csv" -o "$WORK/plots"
  test -s "$WORK/plots/bandwidth.png" && test -s "$WORK/plots/roofline.png" || { echo "FAIL: plots missing"; exit 1; }
  # A file that is not telemetry, or not readable text: one line naming it, exit 1, no traceback.
  for bad in "telemetry cases/heat.toml" "compare $WORK/p/telemetry.csv" "telemetry $TIERSIM"; do
    # shellcheck disable=SC2086
    rc=0; out=$(/usr/bin/python3 scripts/plot $bad -o "$WORK/badplot" 2>&1) || rc=$?
    if [ $rc -ne 1 ] || [ "$(printf '%s\n' "$out" | grep -c .)" -ne 1 ] || [[ "$out" != "plot: "* ]]; then
      echo "FAIL: scripts/plot $bad: rc=$rc: $out"; exit 1
    fi
  done
fi
# scripts/perf-tables on a file that is missing: one line, exit 1.
rc=0; out=$(/usr/bin/python3 scripts/perf-tables "$WORK/missing.csv" 2>&1) || rc=$?
if [ $rc -ne 1 ] || [ "$(printf '%s\n' "$out" | grep -c .)" -ne 1 ] || [[ "$out" != *"missing.csv: cannot read"* ]]; then
  echo "FAIL: scripts/perf-tables on a missing file: rc=$rc: $out"; exit 1
fi
echo "default case ok"
