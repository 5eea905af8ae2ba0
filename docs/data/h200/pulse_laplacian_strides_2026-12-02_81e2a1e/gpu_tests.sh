#!/bin/bash
# GPU tests of the commit in .carry/commit.
set -u
B=/tmp/b; mkdir -p $B/bin $B/lib /tmp/e
tar -xJf .carry/lib.tar.xz -C $B/lib
xz -dc .carry/tests.xz > $B/bin/tiersim_gpu_tests; chmod +x $B/bin/*
export LD_LIBRARY_PATH=$B/lib
L=$OUT/gpu_tests.txt
{
echo "== commit $(cat .carry/commit)"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
$B/bin/tiersim_gpu_tests --gtest_brief=1 2>&1 | grep -E "^\[  (PASSED|FAILED|SKIPPED)|tests from .* ran|FAILED TEST|Failure" | head -40
} > $L 2>&1
cat $L
