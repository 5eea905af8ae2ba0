#!/bin/bash
# The build in .carry (commit in .carry/commit) on an H100: the passes at R = 2 fusing 3 steps (the
# shapes built for 3: 12 x 2, and 8 x 4 in fp32) against the default 2 (16 x 2) and the single
# step, 512^3, periodic; two rounds.
set -u
B=/tmp/b; mkdir -p $B/bin $B/lib /tmp/e
tar -xJf .carry/lib.tar.xz -C $B/lib
xz -dc .carry/tiersim.xz > $B/bin/tiersim; chmod +x $B/bin/*
export LD_LIBRARY_PATH=$B/lib
T=$B/bin/tiersim
L=$OUT/r2_three_steps.txt
{
echo "== commit $(cat .carry/commit)"; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
for round in 1 2; do
  for eq in wave heat; do
    for p in fp32 fp64; do
      C="bench stencil --equation $eq --precision $p --sizes 512 --radii 2 --coeffs constant"
      echo "-- round $round: $C --tilings shared,temporal --temporal-steps 2"
      $T $C --tilings shared,temporal --temporal-steps 2 2>&1 | grep -E "^ *512 |rror" | sed "s/  */ /g"
      echo "-- round $round: $C --tilings temporal --temporal-steps 3"
      $T $C --tilings temporal --temporal-steps 3 2>&1 | grep -E "^ *512 |rror" | sed "s/  */ /g"
      if [ $p = fp32 ]; then
        echo "-- round $round: TIERSIM_TEMPORAL_SHAPE=8,4,2 $C --tilings temporal --temporal-steps 3"
        TIERSIM_TEMPORAL_SHAPE=8,4,2 $T $C --tilings temporal --temporal-steps 3 2>&1 | grep -E "^ *512 |rror" | sed "s/  */ /g"
      fi
    done
  done
done
} > $L 2>&1
cat $L
