"""Turns the summaries written by bench/resolution/run.sh into RESULT.md."""
import datetime
import json
import os
import platform
import sys

out, repeats = sys.argv[1], int(sys.argv[2])


def summary(name):
    with open(os.path.join(out, name, "summary.json")) as f:
        return json.load(f)


def cond(s, name):
    return next(c for c in s["conditions"] if c["name"] == name)


def fmt(o):
    if not o or "ci_low" not in o:
        return "–"
    return f"{o['pct']:.1f} [{o['ci_low']:.1f}, {o['ci_high']:.1f}] (width {o['ci_high'] - o['ci_low']:.1f})"


def width(o):
    return o["ci_high"] - o["ci_low"]


print("# Resolution: rounds vs alternation, repeated A/A, calibration\n")
print(f"- command: `bash bench/resolution/run.sh` (results in `{out}`)")
print(f"- date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC")
print(f"- machine: {os.cpu_count()} cores, kernel {platform.release()}")
print("- workload credit-top1 (16 sessions) on a managed PostgreSQL; overheads in %, with 95% intervals")
print("  (Bonferroni-corrected where an experiment compares several conditions)\n")

r, a = summary("rounds"), summary("alternation")
print("## 1. The same budget (about 5 minutes) spent two ways\n")
print("| comparison | rounds (9 x 8 s per condition) | alternation (140 s per condition) |")
print("|---|---|---|")
print(f"| pg-stat-statements vs baseline | {fmt(cond(r, 'pg-stat-statements')['overhead'])} | {fmt(cond(a, 'pg-stat-statements')['overhead'])} |")
print(f"| A/A (noop in rounds, baseline A/A in alternation) | {fmt(cond(r, 'noop')['overhead'])} | {fmt(cond(a, 'baseline A/A')['overhead'])} |")
print(f"\nMethod per condition: rounds: {cond(r, 'pg-stat-statements').get('method', '')}; "
      f"alternation: {cond(a, 'pg-stat-statements').get('method', '')}.")
if a.get("mde_pct") is not None:
    print(f"Alternation's minimum detectable effect from its A/A phases: {a['mde_pct']:.1f}% (80% power).")
print(f"Rounds' noise floor (95th percentile difference of two baseline runs): {r['noise_floor_pct']:.1f}%.\n")

print(f"## 2. Repeated A/A alternation experiments ({repeats} x 60 s)\n")
print("| # | A/A overhead % [95% CI] | contains 0 | MDE % |")
print("|---:|---|---|---:|")
hits = 0
for i in range(1, repeats + 1):
    s = summary(f"aa-{i}")
    o = cond(s, "baseline A/A")["overhead"]
    ok = o.get("ci_low", 1) <= 0 <= o.get("ci_high", -1)
    hits += ok
    mde = s.get("mde_pct")
    print(f"| {i} | {fmt(o)} | {'yes' if ok else 'NO'} | {mde:.1f} |" if mde is not None else f"| {i} | {fmt(o)} | {'yes' if ok else 'NO'} | – |")
print(f"\n{hits} of {repeats} A/A intervals contain 0 (goal: at least {int(0.9 * repeats)}).\n")

with open(os.path.join(out, "calibrate", "calibration.json")) as f:
    cal = json.load(f)
print("## 3. Calibration: synthetic observers of known cost\n")
c = cal["cost"]
print(f"One loop iteration costs {c['loop_us']:.4f} µs of server CPU; without calibration a statement costs "
      f"{c['server_us_per_stmt']:.1f} µs server + {c['driver_us_per_stmt']:.1f} µs driver CPU.\n")
print("| observer | loops | expected overhead % | measured % [CI] | recovered | expected CPU/stmt Δ % | measured CPU/stmt Δ % [CI] |")
print("|---|---:|---:|---|---|---:|---|")
for k in cal["calibrations"]:
    m = k.get("measured_cpu_per_stmt_change")
    mc = f"{m['pct']:+.1f} [{m['ci_low']:+.1f}, {m['ci_high']:+.1f}]" if m else "–"
    print(f"| {k['name']} | {k['loops']} | {k['expected_overhead_pct']:.1f} | {fmt(k['measured'])} | "
          f"{'yes' if k['recovered'] else 'NO'} | {k['expected_cpu_per_stmt_change_pct']:+.1f} | {mc} |")
