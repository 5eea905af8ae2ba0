#!/bin/bash
# A/B: the build of 0e5c5b4 (before) against this change (after): start-ups at 512^3 and restarts.
set -u
B=/tmp/b; mkdir -p $B/bin $B/lib /tmp/e
tar -xJf .carry/lib.tar.xz -C $B/lib
xz -dc .carry/tiersim_before.xz > $B/bin/before; xz -dc .carry/tiersim.xz > $B/bin/after; chmod +x $B/bin/*
export LD_LIBRARY_PATH=$B/lib
L=$OUT/ab_startup_restart.txt
{
echo "== before: 0e5c5b4; after: $(cat .carry/commit)"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cat /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag; nproc; free -g | head -2
H="cases/heat.toml --set grid.n=512 --set grid.radius=1 --set grid.boundary=periodic --set run.dt=3e-7 --set run.diagnostics_every=1000"
W="cases/wave.toml --set grid.n=512 --set grid.radius=1 --set wave.initial=\"pulse\" --set run.dt=1e-4 --set run.diagnostics_every=1000"
G="cases/gray_scott.toml --set grid.n=512 --set run.dt=0.005 --set run.diagnostics_every=1000"
N="cases/plummer.toml --set nbody.count=1048576 --set run.diagnostics_every=2 --set run.snapshot_every=2"
for round in 1 2; do
for bin in before after; do
  T=$B/bin/$bin
  for c in H W G; do
    echo "-- $bin round $round $c --no-snapshots, 2000 steps"
    $T run ${!c} --backend cuda --steps 2000 --no-snapshots --out /tmp/e/$c --force 2>&1 | grep -E "finished|start-up:|error"
  done
  echo "-- $bin round $round W with a snapshot and checkpoint every 1000, 2000 steps; then --restart to 3000"
  rm -rf /tmp/e/wr; $T run $W --backend cuda --steps 2000 --set run.snapshot_every=1000 --out /tmp/e/wr 2>&1 | grep -E "finished|start-up:|error"
  $T run --restart /tmp/e/wr --steps 3000 2>&1 | grep -E "finished|start-up:|error"
  echo "-- $bin round $round N-body 1M, 4 steps, a snapshot and checkpoint every 2; then --restart to 6"
  rm -rf /tmp/e/nr; $T run $N --backend cuda --steps 4 --out /tmp/e/nr 2>&1 | grep -E "finished|start-up:|error"
  $T run --restart /tmp/e/nr --steps 6 2>&1 | grep -E "finished|start-up:|error"
  rm -rf /tmp/e/wr /tmp/e/nr
done
done
} > $L 2>&1
cat $L
