#!/bin/bash
# A/B: the wave pulse's start-up, the build of 81e2a1e (base) against the commit in .carry/commit
# (new: the Laplacian by strips of rows along chunks of planes), alternating, four rounds at 512^3 (200 steps), two at 1024^3.
set -u
B=/tmp/b; mkdir -p $B/bin $B/lib /tmp/e
tar -xJf .carry/lib.tar.xz -C $B/lib
xz -dc .carry/t81.xz > $B/bin/base; xz -dc .carry/tiersim.xz > $B/bin/new; chmod +x $B/bin/*
export LD_LIBRARY_PATH=$B/lib
L=$OUT/ab_wave_pulse_strips.txt
{
echo "== base: 81e2a1e; new: $(cat .carry/commit)"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc
W="cases/wave.toml --set grid.n=512 --set wave.initial=\"pulse\" --set run.dt=1e-4 --set run.diagnostics_every=1000"
for round in 1 2 3 4; do
for bin in base new; do
  for R in 1 4; do
    echo "-- $bin round $round the wave pulse R = $R --tiling shared --no-snapshots, 200 steps"
    $B/bin/$bin run $W --set grid.radius=$R --backend cuda --tiling shared --steps 200 --no-snapshots --out /tmp/e/w --force 2>&1 | grep -E "finished|wall:|start-up:|error"
  done
done
done
for bin in base new base new; do
  echo "-- $bin the wave pulse at 1024^3, R = 4, 20 steps"
  $B/bin/$bin run cases/wave.toml --set grid.n=1024 --set wave.initial=\"pulse\" --set run.dt=5e-5 --set grid.radius=4 --backend cuda --steps 20 --no-snapshots --out /tmp/e/w --force 2>&1 | grep -E "finished|wall:|start-up:|error"
done
} > $L 2>&1
cat $L
