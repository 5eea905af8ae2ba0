#!/bin/bash
# GPU tests of the commit in .carry/commit (the shares of fixed boundaries measured with fbd6595's
# kernels), then racecheck and synccheck over the wave's passes (the pulse: no source, so the run
# fuses from its first step) and heat's at R = 1 (blocks walking shares of the work).
set -u
B=/tmp/b; mkdir -p $B/bin $B/lib /tmp/e
tar -xJf .carry/lib.tar.xz -C $B/lib
xz -dc .carry/tiersim.xz > $B/bin/tiersim; xz -dc .carry/tests.xz > $B/bin/tiersim_gpu_tests; chmod +x $B/bin/*
export LD_LIBRARY_PATH=$B/lib
T=$B/bin/tiersim
L=$OUT/gpu_tests2.txt
{
echo "== commit $(cat .carry/commit)"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
$B/bin/tiersim_gpu_tests --gtest_brief=1 2>&1 | grep -E "^\[  (PASSED|FAILED|SKIPPED)|tests from .* ran|FAILED TEST|Failure" | head -40
S="--backend cuda --set grid.n=64 --set grid.ny=32 --set grid.nz=24 --tiling temporal --set run.diagnostics_every=7 --steps 10 --no-snapshots --out /tmp/e/s --force"
for spec in "wave 1 fp64 4 fixed" "wave 1 fp64 4 periodic" "wave 2 fp32 2 fixed" "wave 1 fp32 3 fixed" "heat 1 fp32 3 fixed"; do
  set -- $spec
  case $1 in heat) CASE="cases/heat.toml --set run.dt=1e-5" ;; *) CASE="cases/wave.toml --set wave.initial=\"pulse\"" ;; esac
  for tool in racecheck synccheck; do
    echo "-- compute-sanitizer $tool: tiersim run $1 R = $2 $3, 64x32x24, $5, passes of $4 cut every 7 steps, 10 steps"
    compute-sanitizer --tool $tool $T run $CASE $S --set grid.radius=$2 --precision $3 --set stencil.temporal_steps=$4 \
      --set grid.boundary="\"$5\"" 2>&1 | grep -E "SUMMARY|rror|_temporal_r" | sed "s/  */ /g"
  done
done
} > $L 2>&1
cat $L
