#!/usr/bin/env bash
# Bad input on the command line: each case gets one line "tiersim: error: ..." naming the
# problem, a non-zero exit, no stack trace, and no output directory left behind.
set -u
TIERSIM=$1
WORK=$2
rm -rf "$WORK"; mkdir -p "$WORK"
cd "$(dirname "$0")/../.."
fail=0

# expect <expected substring> <args...>
expect() {
  local expected=$1; shift
  local out rc
  out=$("$TIERSIM" "$@" --out "$WORK/out" 2>&1 >/dev/null); rc=$?
  local lines
  lines=$(printf '%s\n' "$out" | grep -c .)
  if [ $rc -eq 0 ] || [[ "$out" != *"$expected"* ]] || [ "$lines" -ne 1 ] || [ -e "$WORK/out" ]; then
    echo "FAIL: tiersim $* -> rc=$rc lines=$lines out-dir-exists=$([ -e "$WORK/out" ] && echo yes || echo no)"
    echo "      expected: $expected"
    echo "      got:      $out"
    fail=1
    rm -rf "$WORK/out"
  else
    echo "ok: $expected"
  fi
}

printf '[run]\nmodel = "nbody"\ndt = 0.01\n[nbody]\ncount = -5\n' > "$WORK/negative.toml"
printf '[run]\nmodel = "nbody"\ndt = 0.01\n[nbdy]\ncount = 5\n' > "$WORK/typo.toml"
printf '[run]\nmodel = "nbody\ndt = 0.01\n' > "$WORK/syntax.toml"
printf '[run]\nmodel = "nbody"\ndt = 0.01\n[nbody]\ncount = 2\nic = "kepler"\nsoftening = 0.0\n[kepler]\neccentricity = 1.5\n' > "$WORK/ecc.toml"
printf '[run]\nmodel = "nbody"\ndt = 0.01\n[nbody]\ncount = 2000000000\n[strategy]\nbackend = "cpu"\n' > "$WORK/huge.toml"

expect "cannot open case file" run "$WORK/missing.toml"
expect "nbody.count: -5 is out of range" run "$WORK/negative.toml"
expect "nbdy.count: unknown key" run "$WORK/typo.toml"
expect "syntax.toml:2: syntax error" run "$WORK/syntax.toml"
expect "kepler.eccentricity: 1.5 is out of range" run "$WORK/ecc.toml"
expect "of host memory" run "$WORK/huge.toml"
expect "grid with halo 2 needs" run cases/heat.toml --backend cpu --set grid.n=20000 --set stencil.force=true
expect "--set nbody.cuont: unknown key (did you mean 'nbody.count'?)" run cases/plummer.toml --set nbody.cuont=3
expect "--set run.dt: 0 is out of range" run cases/plummer.toml --set run.dt=0
expect "--set run.dt: must be a finite number" run cases/plummer.toml --set run.dt=nan
expect "--layout" run cases/plummer.toml --layout zigzag
expect "nbody.softening: 0 is only allowed for the kepler binary" run cases/plummer.toml --set nbody.softening=0 --backend cpu

# An unwritable output directory.
mkdir -p "$WORK/ro"; chmod 500 "$WORK/ro"
if [ "$(id -u)" -ne 0 ]; then
  out=$("$TIERSIM" run cases/plummer.toml --backend cpu --out "$WORK/ro/out" 2>&1); rc=$?
  if [ $rc -eq 0 ] || [[ "$out" != *"cannot create output directory"* ]]; then echo "FAIL: unwritable dir: $out"; fail=1; else echo "ok: unwritable dir"; fi
fi
# An output path that is a file.
touch "$WORK/afile"
out=$("$TIERSIM" run cases/plummer.toml --backend cpu --out "$WORK/afile" 2>&1); rc=$?
if [ $rc -eq 0 ] || [[ "$out" != *"exists and is not a directory"* ]]; then echo "FAIL: file as out dir: $out"; fail=1; else echo "ok: file as out dir"; fi

exit $fail
