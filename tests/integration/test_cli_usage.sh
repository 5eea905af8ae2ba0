#!/usr/bin/env bash
# The command line as people type it: options before or after the case path, --set repeated,
# list options of compare followed by the case. Each check runs a tiny case (64 bodies, 2 steps).
set -u
source "$(dirname "$0")/prologue.sh"
fail=0

# ok <name> <args...>: the command succeeds.
ok() {
  local name=$1; shift
  local out
  if out=$("$TIERSIM" "$@" 2>&1); then echo "ok: $name"; else echo "FAIL: $name: tiersim $*"; echo "$out"; fail=1; fi
}
# stored <dir> <line>: the effective case stored in dir holds this line.
stored() {
  if grep -qx "$2" "$1/case.toml" 2>/dev/null; then echo "ok: $1 has '$2'"; else echo "FAIL: $1/case.toml lacks '$2'"; fail=1; fi
}

# --set before the case path takes one value, not the case path too.
ok "--set before the case" run --set nbody.count=64 cases/plummer.toml --backend cpu --steps 2 -q --out "$WORK/a"
stored "$WORK/a" "count = 64"
# Repeated --set, before and after the case path, each with one value.
ok "--set repeated around the case" run --set nbody.count=48 cases/plummer.toml --set nbody.softening=0.02 \
   --set run.snapshot_every=1 --backend cpu --steps 2 -q --out "$WORK/b"
stored "$WORK/b" "count = 48"
stored "$WORK/b" "softening = 0.02"
stored "$WORK/b" "snapshot_every = 1"
# A second value after one --set is not an override: it is refused in one line, nothing written.
out=$("$TIERSIM" run cases/plummer.toml --set nbody.count=64 nbody.softening=0.02 --backend cpu --steps 2 -q \
      --out "$WORK/c" 2>&1); rc=$?
if [ $rc -ne 0 ] && [ "$(printf '%s\n' "$out" | grep -c .)" -eq 1 ] && [[ "$out" == "tiersim: error: "* ]] && [ ! -e "$WORK/c" ]; then
  echo "ok: two values after one --set refused"
else
  echo "FAIL: two values after one --set: rc=$rc: $out"; fail=1
fi

# compare: list options and --set before the case path.
ok "compare lists before the case" compare --backend cpu --layout aos,soa --set nbody.count=64 --set run.steps=3 \
   cases/plummer.toml --steps 2 --warmup 0 --no-chart --out "$WORK/d"
n=$(grep -c ",nbody_forces," "$WORK/d/compare.csv" 2>/dev/null || echo 0)
[ "$n" -eq 2 ] && echo "ok: compare ran both layouts" || { echo "FAIL: compare.csv has $n force rows, expected 2"; fail=1; }

# tiersim info names the build (type, compiler, HDF5) and, with CUDA, the architectures.
info=$("$TIERSIM" info 2>&1)
if printf '%s\n' "$info" | grep -Eq '^build: [A-Za-z]+, (GCC|Clang) [0-9]+\.[0-9]+\.[0-9]+, HDF5 [0-9]+\.[0-9]+\.[0-9]+$'; then
  echo "ok: info names build type, compiler and HDF5"
else echo "FAIL: info lacks 'build: TYPE, COMPILER X.Y.Z, HDF5 X.Y.Z':"; echo "$info"; fail=1; fi
if printf '%s\n' "$info" | grep -q "CUDA compiled in" && ! printf '%s\n' "$info" | grep -Eq "CUDA compiled in \(architectures [0-9a-z,-]+\)"; then
  echo "FAIL: info does not name the CUDA architectures:"; echo "$info"; fail=1
else echo "ok: info names the CUDA architectures where CUDA is compiled in"; fi

# An unknown subcommand is named, with the ones there are (CLI11 alone says "A subcommand is required").
# one_line_error <expected> <args...>
one_line_error() {
  local expected=$1; shift
  local out rc
  out=$("$TIERSIM" "$@" 2>&1); rc=$?
  if [ $rc -ne 0 ] && [ "$(printf '%s\n' "$out" | grep -c .)" -eq 1 ] && [[ "$out" == *"$expected"* ]]; then echo "ok: $expected"
  else echo "FAIL: tiersim $*: rc=$rc, expected '$expected', got: $out"; fail=1; fi
}
one_line_error "tiersim: error: unknown subcommand 'frobnicate' (expected run, info, keys, compare, bench)" frobnicate
one_line_error "tiersim: error: bench: unknown subcommand 'frobnicate' (expected nbody, stencil, l2)" bench frobnicate
one_line_error "tiersim: error: a subcommand is required (run, info, keys, compare, bench)"
# The benchmarks check every value before they set up a device (and on the CPU backend, where
# the tilings and coefficient spaces do not apply, instead of ignoring them): one line each.
one_line_error "--sizes: must be >= 1, not 0" bench stencil --backend cpu --sizes 0
one_line_error "--sizes: must be >= 1, not -2" bench stencil --backend cpu --sizes 16,-2
# A size too large for host memory is refused before anything is printed or measured, its CSV unwritten.
one_line_error "bench stencil --sizes 100000 needs 16000.00 TB of host memory" bench stencil --backend cpu \
  --sizes 16,100000 --csv "$WORK/huge.csv"
[ ! -e "$WORK/huge.csv" ] && echo "ok: no CSV for a size too large" || { echo "FAIL: $WORK/huge.csv written"; fail=1; }
one_line_error "--radii: Value 5 not in range 1 to 4" bench stencil --backend cpu --sizes 16 --radii 5
one_line_error "--tilings: tiled not in {none,shared,temporal}" bench stencil --backend cpu --sizes 16 --tilings tiled
one_line_error "--coeffs: shared not in {constant,global}" bench stencil --backend cpu --sizes 16 --coeffs shared
one_line_error "--prefetch: 3 not in {0,2,4}" bench stencil --sizes 16 --prefetch 3
one_line_error "--reps: must be >= 1, not 0" bench stencil --sizes 16 --reps 0
one_line_error "--reps: '' is not an integer" bench stencil --sizes 16 --reps ''
one_line_error "--sizes: 'x' is not an integer" bench nbody --sizes x
one_line_error "--layouts: zigzag not in {aos,soa,aosoa,float4}" bench nbody --layouts zigzag
one_line_error "--bodies-per-thread: 3 not in {0,1,2,4,8}" bench nbody --bodies-per-thread 3
one_line_error "--radius: Value 9 not in range 1 to 4" bench l2 --radius 9
one_line_error "--nbody-tilings: temporal not in {none,shared}" bench l2 --nbody-tilings temporal
one_line_error "--steps: must be >= 1, not 0" compare cases/heat.toml --steps 0
# compare refuses a list that would run the same kernels under two names, before any directory.
one_line_error "--tiling: 'none' is given twice" compare cases/heat.toml --backend cpu --tiling none,shared,none \
  --out "$WORK/cmp"
one_line_error "--layout: does not change the kernels of a stencil case (it is a flag of N-body cases)" \
  compare cases/heat.toml --backend cpu --layout aos,soa --out "$WORK/cmp"
one_line_error "--coeffs: does not change the kernels of an N-body case (it is a flag of stencil cases)" \
  compare cases/plummer.toml --backend cpu --coeffs constant,global --out "$WORK/cmp"
one_line_error "--tiling: 'temporal' is a strategy of the stencil model; this case is run.model = \"nbody\"" \
  compare cases/plummer.toml --backend cpu --tiling none,temporal --out "$WORK/cmp"
[ ! -e "$WORK/cmp" ] || { echo "FAIL: a refused compare made $WORK/cmp"; fail=1; }
one_line_error "--format: empty list (expected xdmf, vtk or xdmf,vtk)" run cases/heat.toml --backend cpu --format '' \
  --out "$WORK/fmt"
[ ! -e "$WORK/fmt" ] || { echo "FAIL: a refused --format made $WORK/fmt"; fail=1; }
# --backend cuda where no GPU is usable: one line naming why, nothing written.
if "$TIERSIM" info | grep -q "GPU: none usable"; then
  one_line_error "--backend cuda (strategy.backend): no usable GPU (" run cases/heat.toml --backend cuda --out "$WORK/nogpu"
  [ ! -e "$WORK/nogpu" ] || { echo "FAIL: a run refused for want of a GPU made $WORK/nogpu"; fail=1; }
  one_line_error "--backend cuda (strategy.backend): no usable GPU (" bench stencil --backend cuda --sizes 8
fi
# bench --csv: a path that cannot be written is refused before anything runs; the file is written
# whole at the end, never through a link, and not at all when the sweep stops on an error.
one_line_error "$WORK/none/x.csv: cannot write the CSV file there" bench stencil --backend cpu --sizes 8 \
  --csv "$WORK/none/x.csv"
echo precious >"$WORK/precious.txt" && ln -sf "$WORK/precious.txt" "$WORK/link.csv"
"$TIERSIM" bench stencil --backend cpu --sizes 8 --radii 1 --reps 1 --warmup 0 --csv "$WORK/link.csv" >/dev/null 2>&1
if [ "$(cat "$WORK/precious.txt")" = precious ] && [ ! -L "$WORK/link.csv" ] && [ "$(grep -c '^8,1,' "$WORK/link.csv")" -eq 1 ]; then
  echo "ok: bench --csv replaces a link at its path, never writes through it"
else echo "FAIL: bench --csv and a link: target now '$(cat "$WORK/precious.txt")'"; ls -la "$WORK/link.csv"; fail=1; fi
"$TIERSIM" bench stencil --backend cpu --sizes 8,100000 --radii 1 --reps 1 --warmup 0 --csv "$WORK/part.csv" >/dev/null 2>&1; rc=$?
if [ $rc -ne 0 ] && [ ! -e "$WORK/part.csv" ] && [ ! -e "$WORK/part.csv.tmp" ]; then echo "ok: a bench that stops on an error writes no CSV"
else echo "FAIL: a bench stopped by an error (rc=$rc) left $(ls "$WORK"/part.csv* 2>/dev/null)"; fail=1; fi
# A collision needs two bodies: the message names the key and the value.
one_line_error 'nbody.count: 1 is too few for nbody.ic = "collision"' run cases/collision.toml --backend cpu --set nbody.count=1 \
  --out "$WORK/f"
[ ! -e "$WORK/f" ] || { echo "FAIL: a refused collision left $WORK/f"; fail=1; }

# The commented example case is `tiersim keys --toml`, and it runs as written.
if "$TIERSIM" keys --toml | cmp -s - cases/example.toml; then echo "ok: cases/example.toml is tiersim keys --toml"
else echo "FAIL: cases/example.toml differs from tiersim keys --toml"; fail=1; fi
ok "cases/example.toml runs" run cases/example.toml --backend cpu --steps 2 --set nbody.count=256 -q --out "$WORK/e"
stored "$WORK/e" 'model = "nbody"'
stored "$WORK/e" "count = 256"

exit $fail
