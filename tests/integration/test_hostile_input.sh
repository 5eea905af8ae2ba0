#!/usr/bin/env bash
# Input that a user gets wrong or that someone plants: an empty --out, keys of the other model,
# flags out of range, case files that are not files (a link to /dev/zero, a FIFO) or too large,
# case files that cannot be opened, binary garbage, and titles with control characters, quotes,
# backslashes and unicode. Each refusal is one line "tiersim: error: ..." naming the problem (and
# the flag or file as given), a non-zero exit within seconds, no output directory, and only
# printable text: never raw bytes of the input.
set -u
source "$(dirname "$0")/prologue.sh"
fail=0
mkdir -p "$WORK/cwd"

# True when the text holds a byte that is not printable ASCII or valid UTF-8 text (a control
# character, DEL, a stray byte).
unprintable() {
  /usr/bin/python3 -c '
import sys
b = sys.stdin.buffer.read().rstrip(b"\n")
try:
    t = b.decode("utf-8")
except UnicodeDecodeError:
    sys.exit(0)
sys.exit(0 if any(ord(c) < 32 or 0x7f <= ord(c) < 0xa0 for c in t) else 1)'
}

# The address-space bound (4 GB) keeps a runaway allocation from taking the machine; a build under
# AddressSanitizer reserves terabytes of shadow memory at start-up, so there the bound is left off.
VMEM=4000000
if (ulimit -v $VMEM; "$TIERSIM" --version) 2>&1 | grep -q AddressSanitizer; then
  VMEM=unlimited
  echo "note: no address-space bound (this build runs under AddressSanitizer)"
fi

# refused <label> <expected substring> <tiersim args...>: run from $WORK/cwd (so a default out/
# would show), bounded in time and memory.
refused() {
  local label=$1 expected=$2; shift 2
  local out rc lines
  rm -rf "$WORK/out" "$WORK/cwd/out"
  out=$(cd "$WORK/cwd" && (ulimit -v $VMEM; exec timeout 20 "$TIERSIM" "$@" 2>&1 >/dev/null)); rc=$?
  lines=$(printf '%s\n' "$out" | grep -c .)
  if [ $rc -eq 0 ] || [ $rc -eq 124 ] || [[ "$out" != "tiersim: error: "* ]] || [[ "$out" != *"$expected"* ]] ||
     [ "$lines" -ne 1 ] || [ -e "$WORK/out" ] || [ -e "$WORK/cwd/out" ] || printf '%s' "$out" | unprintable; then
    echo "FAIL: $label: rc=$rc lines=$lines out-dir=$([ -e "$WORK/out" ] || [ -e "$WORK/cwd/out" ] && echo yes || echo no)"
    echo "      expected: $expected"
    echo "      got:      $(printf '%s' "$out" | head -c 300 | cat -v)"
    fail=1
  else
    echo "ok: $label: $out"
  fi
}
CASE=$PWD/cases/plummer.toml
HEAT=$PWD/cases/heat.toml

# ---- The command line ---------------------------------------------------------------------------
refused "--out ''" "--out: empty" run "$CASE" --backend cpu --set nbody.count=16 --steps 1 -q --out ""
refused "--restart ''" "--restart: empty" run --restart "" -q
refused "compare --out ''" "--out: empty path" compare "$CASE" --backend cpu --steps 1 --out ""
refused "--steps beyond int64" "--steps: 99999999999999999999 is out of range" \
  run "$CASE" --backend cpu --steps 99999999999999999999 -q --out "$WORK/out"
out=$(cd "$WORK/cwd" && "$TIERSIM" run "$CASE" --steps 99999999999999999999 -q --out "$WORK/out" 2>&1)
if [[ "$out" == *"run.steps"* ]] || [[ "$out" == *"9223372036854775807"* ]]; then
  echo "FAIL: --steps names another option or a clamped value: $out"; fail=1
fi
refused "--steps beyond run.steps' range" "--steps: 10000000000000 is out of range" \
  run "$CASE" --backend cpu --steps 10000000000000 -q --out "$WORK/out"
refused "--l2-persist-bytes beyond int64" "--l2-persist-bytes: 99999999999999999999 is out of range" \
  run "$CASE" --backend cpu --l2-persist-bytes 99999999999999999999 -q --out "$WORK/out"

# ---- Keys of the other model --------------------------------------------------------------------
printf '[run]\nmodel = "nbody"\ndt = 0.01\n[nbody]\ncount = 16\n[grid]\nn = 32\n' > "$WORK/nbody_grid.toml"
printf '[run]\nmodel = "stencil"\ndt = 1e-5\n[grid]\nn = 8\n[nbody]\ncount = 16\n' > "$WORK/stencil_nbody.toml"
printf '[run]\nmodel = "nbody"\ndt = 0.01\n[heat]\ndiffusivity = 2.0\n' > "$WORK/nbody_heat.toml"
refused "[grid] in an N-body case" 'nbody_grid.toml:7: grid.n: a key of run.model = "stencil"; this case is run.model = "nbody"' \
  run "$WORK/nbody_grid.toml" --backend cpu --out "$WORK/out"
refused "[nbody] in a stencil case" 'stencil_nbody.toml:7: nbody.count: a key of run.model = "nbody"; this case is run.model = "stencil"' \
  run "$WORK/stencil_nbody.toml" --backend cpu --out "$WORK/out"
refused "[heat] in an N-body case" 'heat.diffusivity: a key of run.model = "stencil"' \
  run "$WORK/nbody_heat.toml" --backend cpu --out "$WORK/out"
refused "--set grid.n on an N-body case" '--set grid.n: a key of run.model = "stencil"; this case is run.model = "nbody"' \
  run "$CASE" --backend cpu --set grid.n=32 --out "$WORK/out"
refused "--set nbody.count on a stencil case" '--set nbody.count: a key of run.model = "nbody"' \
  run "$HEAT" --backend cpu --set nbody.count=32 --out "$WORK/out"

# ---- Case files that cannot be read, or must not be ---------------------------------------------
refused "a missing case file" "missing.toml: cannot open case file: No such file or directory" \
  run "$WORK/missing.toml" --out "$WORK/out"
refused "a directory" "cases: is a directory, not a case file" run "$PWD/cases" --out "$WORK/out"
ln -sf "$WORK/nowhere.toml" "$WORK/dangling.toml"
refused "a dangling link" "dangling.toml: cannot open case file: No such file or directory" run "$WORK/dangling.toml" --out "$WORK/out"
ln -sf "$WORK/loop_b.toml" "$WORK/loop_a.toml"; ln -sf "$WORK/loop_a.toml" "$WORK/loop_b.toml"
refused "a link loop" "loop_a.toml: cannot open case file: Too many levels of symbolic links" run "$WORK/loop_a.toml" --out "$WORK/out"
cp cases/plummer.toml "$WORK/secret.toml"; chmod 000 "$WORK/secret.toml"
if [ "$(id -u)" -ne 0 ]; then
  refused "an unreadable case file" "secret.toml: cannot open case file: Permission denied" run "$WORK/secret.toml" --out "$WORK/out"
else
  echo "note: unreadable case file skipped (root reads it)"
fi
ln -sf /dev/zero "$WORK/zero.toml"
refused "a link to /dev/zero" "zero.toml: not a regular file (a character device)" run "$WORK/zero.toml" --out "$WORK/out"
ln -sf /dev/urandom "$WORK/urandom.toml"
refused "a link to /dev/urandom" "urandom.toml: not a regular file (a character device)" run "$WORK/urandom.toml" --out "$WORK/out"
mkfifo "$WORK/fifo.toml"
refused "a FIFO" "fifo.toml: not a regular file (a FIFO)" run "$WORK/fifo.toml" --out "$WORK/out"
{ cat cases/plummer.toml; head -c 2000000 /dev/zero | tr '\0' '#'; } > "$WORK/huge.toml"
refused "a 2 MB case file" "huge.toml: 2" run "$WORK/huge.toml" --out "$WORK/out"
head -c 4096 /dev/urandom > "$WORK/garbage.toml"
refused "binary garbage" "garbage.toml:" run "$WORK/garbage.toml" --out "$WORK/out"
printf '[run]\nmodel = "nb\001\033[31mody"\ndt = 0.01\n' > "$WORK/control.toml"
refused "control characters in a value" "control.toml:" run "$WORK/control.toml" --out "$WORK/out"
printf '[run]\nmodel = "nbody"\ndt = 0.01\n[strategy]\nlayout = "s\\u0007oa"\n' > "$WORK/escaped.toml"
refused "an escaped control character in a choice" "strategy.layout: unknown value" run "$WORK/escaped.toml" --out "$WORK/out"

# ---- Titles with control characters, quotes, backslashes and unicode round-trip ---------------
# The stored case (case.toml, /parameters) must read back as the same title, and a restart (which
# reads the stored case) must work.
title='bell\u0007 tab\t nl\n quote\" backslash\\ del\u007f e\u00e9 cjk\u4e2d emoji\U0001F600 esc\u001b[31m'
if ! "$TIERSIM" run "$CASE" --backend cpu --set nbody.count=16 --steps 2 --set run.snapshot_every=1 -q \
     --set "run.title=\"$title\"" --out "$WORK/title" >/dev/null 2>"$WORK/title.err"; then
  echo "FAIL: a title with control characters: $(cat -v "$WORK/title.err")"; fail=1
else
  got=$(/usr/bin/python3 - "$WORK/title/case.toml" <<'PYEOF'
import sys, tomllib
with open(sys.argv[1], "rb") as f:
    t = tomllib.load(f)["run"]["title"]
print(t == 'bell\x07 tab\t nl\n quote" backslash\\ del\x7f e\u00e9 cjk\u4e2d emoji\U0001F600 esc\x1b[31m')
PYEOF
)
  if [ "$got" != "True" ]; then echo "FAIL: case.toml does not read back as the same title: $got"; fail=1; fi
  if ! "$TIERSIM" run --restart "$WORK/title" --steps 4 -q >/dev/null 2>"$WORK/title.err"; then
    echo "FAIL: restart of a run with a control character in its title: $(cat -v "$WORK/title.err")"; fail=1
  else
    echo "ok: a title with control characters, quotes, backslashes and unicode round-trips and restarts"
  fi
  # A restart that would change the title names both values printably.
  out=$("$TIERSIM" run --restart "$WORK/title" --steps 6 -q --set 'run.title="x\u0007y"' 2>&1 >/dev/null); rc=$?
  if [ $rc -eq 0 ] || [[ "$out" != *"run.title cannot change"* ]] || printf '%s' "$out" | unprintable; then
    echo "FAIL: a restart changing the title: rc=$rc $(printf '%s' "$out" | cat -v)"; fail=1
  else
    echo "ok: a restart changing the title is refused printably: $out"
  fi
fi
exit $fail
