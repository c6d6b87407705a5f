#!/usr/bin/env bash
# The query-by-query comparison of a mix, measured:
#   1. what reading a backend's CPU clock costs the driver per execution;
#   2. the stratified estimator's coverage and width by simulation, beside
#      the whole-run estimator's;
#   3. a known server CPU cost added to every execution of dss-mix (5% and
#      10% of the mean execution), recovered by rounds of fixed work.
# Writes bench/mix-stratified/RESULT.md. Takes about 10 minutes; run it on
# an otherwise idle machine, never beside another benchmark.
set -euo pipefail
cd "$(dirname "$0")/../.."
make build >/dev/null
out=${OUT:-$(mktemp -d /tmp/obsbench-mix.XXXXXX)}
rounds=${ROUNDS:-8}
seed=${SEED:-7}
bin=./bin/obsbench
echo "results under $out" >&2

# REPORT_ONLY=1 OUT=DIR rewrites RESULT.md from an earlier run's DIR.
if [ -z "${REPORT_ONLY:-}" ]; then
  go test ./internal/collect -run '^$' -bench BenchmarkTaskClock -benchtime 2s -count 3 >"$out/taskclock.txt"
  go test -count=1 ./internal/analysis -run TestStratifiedCoverage -v >"$out/coverage.txt"
  $bin calibrate --workload dss-mix --effects 5,10 --rounds "$rounds" --seed "$seed" --out "$out/calibrate" >"$out/calibrate.txt"
fi

{
  echo "# Mixes compared query by query: cost, coverage, calibration"
  echo
  echo "- command: \`bash bench/mix-stratified/run.sh\` (ROUNDS=$rounds SEED=$seed)"
  echo "- date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  echo "- machine: nproc $(nproc), kernel $(uname -r)"
  echo
  echo "## 1. Reading a session's server CPU clock"
  echo
  echo "One pread of \`/proc/PID/schedstat\`; the driver reads it before and after each execution of a mix:"
  echo
  echo '```'
  grep -E '^Benchmark|^cpu' "$out/taskclock.txt"
  echo '```'
  echo
  echo "## 2. The stratified estimator by simulation"
  echo
  echo "\`go test ./internal/analysis -run TestStratifiedCoverage -v\` (4,000 simulated experiments of 10 rounds per effect; coverage of the 95% interval, median width beside the whole-run estimator's):"
  echo
  echo '```'
  grep -E 'coverage' "$out/coverage.txt" | sed 's/^ *//'
  echo '```'
  echo
  echo "## 3. Known added cost on dss-mix"
  echo
  echo "\`obsbench calibrate --workload dss-mix --effects 5,10 --rounds $rounds --seed $seed\`:"
  echo
  echo '```'
  cat "$out/calibrate.txt"
  echo '```'
  echo
  echo "## 4. One query's server CPU, run by run"
  echo
  echo "The baseline runs of section 3 (each on a freshly restarted server): every execution of q10 and of q13 is the same work (--blocks 1: the same parameters in every session and run); server CPU per execution in ms:"
  echo
  echo "| round | q10 min | q10 median | q10 max | q13 min | q13 median | q13 max |"
  echo "|---:|---:|---:|---:|---:|---:|---:|"
  python3 - "$out/calibrate/results.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["condition"] != "baseline":
        continue
    cells = []
    for q in (9, 12):
        v = sorted(e["server_cpu_us"] / 1000 for e in r["driver"]["executions"] if e["stmt"] == q)
        cells += [v[0], v[len(v) // 2], v[-1]]
    print("| %d | " % r["round"] + " | ".join("%.0f" % c for c in cells) + " |")
PY
} > bench/mix-stratified/RESULT.md
cat bench/mix-stratified/RESULT.md
