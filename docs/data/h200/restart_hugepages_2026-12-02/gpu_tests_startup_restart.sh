#!/bin/bash
# GPU tests, memcheck over restarts, and this build's start-ups and restarts at 512^3.
set -u
B=/tmp/b; mkdir -p $B/bin $B/lib /tmp/e
tar -xJf .carry/lib.tar.xz -C $B/lib
xz -dc .carry/tiersim.xz > $B/bin/tiersim; xz -dc .carry/tests.xz > $B/bin/tiersim_gpu_tests; chmod +x $B/bin/*
export LD_LIBRARY_PATH=$B/lib
T=$B/bin/tiersim
{
echo "== commit $(cat .carry/commit)"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
$B/bin/tiersim_gpu_tests --gtest_brief=1 2>&1 | grep -E "^\[  (PASSED|FAILED|SKIPPED)|tests from .* ran|FAILED TEST|Failure"
for c in "cases/wave.toml --set grid.n=64" "cases/plummer.toml --set nbody.count=4096"; do
  rm -rf /tmp/e/m; $T run $c --backend cuda --steps 20 --set run.snapshot_every=10 --out /tmp/e/m -q
  $T run --restart /tmp/e/m --steps 30 -q
  echo "memcheck, restart of: $c"
  rm -rf /tmp/e/m; $T run $c --backend cuda --steps 20 --set run.snapshot_every=10 --out /tmp/e/m -q
  compute-sanitizer --tool memcheck $T run --restart /tmp/e/m --steps 30 2>&1 | grep -E "ERROR SUMMARY|finished|start-up:"
done
} > $OUT/gpu_tests.txt 2>&1
L=$OUT/startup_restart.txt
{
echo "== commit $(cat .carry/commit)"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
H="cases/heat.toml --set grid.n=512 --set grid.radius=1 --set grid.boundary=periodic --set run.dt=3e-7 --set run.diagnostics_every=1000"
W="cases/wave.toml --set grid.n=512 --set grid.radius=1 --set wave.initial=\"pulse\" --set run.dt=1e-4 --set run.diagnostics_every=1000"
G="cases/gray_scott.toml --set grid.n=512 --set run.dt=0.005 --set run.diagnostics_every=1000"
N="cases/plummer.toml --set nbody.count=1048576 --set run.diagnostics_every=2 --set run.snapshot_every=2"
for round in 1 2; do
  for c in H W G; do
    for t in shared temporal; do
    echo "-- round $round $c --tiling $t --no-snapshots, 2000 steps"
    $T run ${!c} --backend cuda --tiling $t --steps 2000 --no-snapshots --out /tmp/e/$c --force 2>&1 | grep -E "finished|start-up:|error"
    done
  done
  echo "-- round $round W with a snapshot and checkpoint every 1000, 2000 steps; then --restart to 3000"
  rm -rf /tmp/e/wr; $T run $W --backend cuda --steps 2000 --set run.snapshot_every=1000 --out /tmp/e/wr 2>&1 | grep -E "finished|start-up:|error"
  $T run --restart /tmp/e/wr --steps 3000 2>&1 | grep -E "finished|start-up:|error"
  echo "-- round $round N-body 1M, 4 steps, a snapshot and checkpoint every 2; then --restart to 6"
  rm -rf /tmp/e/nr; $T run $N --backend cuda --steps 4 --out /tmp/e/nr 2>&1 | grep -E "finished|start-up:|error"
  $T run --restart /tmp/e/nr --steps 6 2>&1 | grep -E "finished|start-up:|error"
  rm -rf /tmp/e/wr /tmp/e/nr
done
} > $L 2>&1
cat $OUT/gpu_tests.txt; tail -c 3000 $L
