#!/usr/bin/env bash
# How finely can obsbench resolve an overhead on this machine?
#   1. the same ~5-minute budget spent on plain rounds vs on alternation:
#      interval widths for a cheap observer (pg-stat-statements) and for an
#      A/A comparison;
#   2. repeated A/A alternation experiments: how many intervals contain 0;
#   3. the calibration observer at a known 3% and 10%.
# Writes bench/resolution/RESULT.md. Takes about 25 minutes; run it on an
# otherwise idle machine, never beside another benchmark.
set -euo pipefail
cd "$(dirname "$0")/../.."
make build >/dev/null
out=${OUT:-$(mktemp -d /tmp/obsbench-resolution.XXXXXX)}
aa_repeats=${AA_REPEATS:-10}
bin=./bin/obsbench
mkdir -p "$out"
echo "results under $out" >&2

# 1. Same budget, two methods. Rounds: baseline, noop (A/A) and the
#    observer, 9 rounds of 8 s (+2 s warm-up): about 5 minutes. Alternation:
#    the A/A arm and the observer, 140 s each: about 5 minutes.
$bin run --method rounds --observers pg-stat-statements,noop --observer-file bench/resolution/noop.yaml \
  --rounds 9 --duration 8s --seed 11 --out "$out/rounds" >"$out/rounds.txt"
$bin run --method alternation --observers pg-stat-statements --alt-duration 140s --seed 11 \
  --out "$out/alternation" >"$out/alternation.txt"

# 2. Repeated A/A alternation experiments, 60 s each.
for i in $(seq 1 "$aa_repeats"); do
  $bin run --method alternation --observers baseline --alt-duration 60s --seed "$i" \
    --out "$out/aa-$i" >"$out/aa-$i.txt"
done

# 3. Calibration: synthetic observers of known cost.
$bin calibrate --effects 3,10 --alt-duration 90s --seed 5 --out "$out/calibrate" >"$out/calibrate.txt"

python3 bench/resolution/report.py "$out" "$aa_repeats" > bench/resolution/RESULT.md
cat bench/resolution/RESULT.md
