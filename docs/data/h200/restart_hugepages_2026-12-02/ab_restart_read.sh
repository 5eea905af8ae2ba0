#!/bin/bash
# A/B: restarts, the build of eb99359 (before) against this change (after: checkpoint arrays read
# without zeroing, on huge pages).
set -u
B=/tmp/b; mkdir -p $B/bin $B/lib /tmp/e
tar -xJf .carry/lib.tar.xz -C $B/lib
xz -dc .carry/tiersim_before.xz > $B/bin/before; xz -dc .carry/tiersim.xz > $B/bin/after; chmod +x $B/bin/*
export LD_LIBRARY_PATH=$B/lib
L=$OUT/ab_restart_read.txt
{
echo "== before: eb99359; after: $(cat .carry/commit)"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
W="cases/wave.toml --set grid.n=512 --set grid.radius=1 --set wave.initial=\"pulse\" --set run.dt=1e-4 --set run.diagnostics_every=1000"
H="cases/heat.toml --set grid.n=512 --set run.dt=4e-7 --precision fp64 --set run.diagnostics_every=1000"
N="cases/plummer.toml --set nbody.count=1048576 --set run.diagnostics_every=2 --set run.snapshot_every=2"
# One run directory each, written once by the before build; every restart continues a copy of it.
$B/bin/before run $W --backend cuda --steps 1000 --set run.snapshot_every=1000 --out /tmp/e/w0 -q
$B/bin/before run $H --backend cuda --steps 1000 --set run.snapshot_every=1000 --out /tmp/e/h0 -q
$B/bin/before run $N --backend cuda --steps 2 --out /tmp/e/n0 -q
du -sh /tmp/e/w0 /tmp/e/h0 /tmp/e/n0
for round in 1 2 3; do
for bin in before after; do
  for r in w h n; do
    rm -rf /tmp/e/r; cp -r /tmp/e/${r}0 /tmp/e/r
    case $r in w) s=1200;; h) s=1200;; n) s=4;; esac
    echo "-- $bin round $round restart of $r to step $s"
    $B/bin/$bin run --restart /tmp/e/r --steps $s 2>&1 | grep -E "finished|start-up:|error"
  done
done
done
} > $L 2>&1
cat $L
