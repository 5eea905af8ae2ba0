#!/bin/bash
# A/B: the wave pulse's start-up, the build of 3336baa (before) against this commit (after); and
# the README's heat run with this commit.
set -u
B=/tmp/b; mkdir -p $B/bin $B/lib /tmp/e
tar -xJf .carry/lib.tar.xz -C $B/lib
xz -dc .carry/tiersim_before.xz > $B/bin/before; xz -dc .carry/tiersim.xz > $B/bin/after; chmod +x $B/bin/*
export LD_LIBRARY_PATH=$B/lib
L=$OUT/ab_wave_pulse.txt
{
echo "== before: 3336baa; after: $(cat .carry/commit)"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
W="cases/wave.toml --set grid.n=512 --set grid.radius=1 --set wave.initial=\"pulse\" --set run.dt=1e-4 --set run.diagnostics_every=1000"
for round in 1 2 3; do
for bin in before after; do
  for t in shared temporal; do
    echo "-- $bin round $round the wave pulse --tiling $t --no-snapshots, 2000 steps"
    $B/bin/$bin run $W --backend cuda --tiling $t --steps 2000 --no-snapshots --out /tmp/e/w --force 2>&1 | grep -E "finished|start-up:|error"
  done
done
done
} > $L 2>&1
R=$OUT/readme_heat.txt
{
echo "== commit $(cat .carry/commit)"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for i in 1 2; do
rm -rf /tmp/e/r; $B/bin/after run cases/heat.toml --backend cuda --set grid.n=512 --set grid.radius=4 --set run.dt=3e-7 --steps 5000 --set run.diagnostics_every=10 --set run.snapshot_every=2500 --out /tmp/e/r 2>&1 | tail -7
done
} > $R 2>&1
cat $L; cat $R
