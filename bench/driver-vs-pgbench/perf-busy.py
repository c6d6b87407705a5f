#!/usr/bin/env python3
"""Per-CPU busy share from `perf sched timehist -w` output.

Usage, while one tool's measured run is going (e.g. a -duration 20s run):

    perf sched record -a -o /tmp/sched.data -- sleep 2
    perf sched timehist -i /tmp/sched.data -w > /tmp/sched.txt
    python3 bench/driver-vs-pgbench/perf-busy.py /tmp/sched.txt

It sums the run time of every task but the idle task per CPU (perf 6.1's
own idle statistics miss a CPU on this machine's 6.18 kernel) and prints
each CPU's busy share over the window and its five busiest tasks.
"""
import collections
import re
import sys

LINE = re.compile(r'\s*(\d+\.\d+)\s+\[(\d+)\]\s+(\S.*?)\s{2,}(.*)$')


def main(path):
    busy = collections.Counter()
    tasks = collections.defaultdict(collections.Counter)
    first = last = None
    with open(path) as f:
        for line in f:
            m = LINE.match(line)
            if not m:
                continue
            t, cpu, task, rest = float(m.group(1)), int(m.group(2)), m.group(3).strip(), m.group(4)
            first = t if first is None else first
            last = t
            if 'awakened' in rest or task == '<idle>':
                continue
            try:
                run = float(rest.split()[2])  # wait time, sch delay, run time (ms)
            except (IndexError, ValueError):
                continue
            busy[cpu] += run
            tasks[cpu][re.sub(r'\[.*', '', task)] += run
    if first is None:
        sys.exit(f'{path}: no perf sched timehist lines')
    window = (last - first) * 1000
    print(f'window {window:.0f} ms')
    for cpu in sorted(busy):
        top = ', '.join(f'{k} {v:.0f} ms' for k, v in tasks[cpu].most_common(5))
        print(f'cpu {cpu}: {100 * busy[cpu] / window:.1f}% busy ({top})')


if __name__ == '__main__':
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
