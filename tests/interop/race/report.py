#!/usr/bin/env python3
"""The race's table (and, with --svg, its plot) from the RESULT lines of tests/interop/race/run.sh.

usage: report.py RESULTS [--before RESULTS] [--svg OUT.svg]

Each measure is given as median (best) over every round of every process; the ratio is rlmeta's
advantage, median against median (Kafka's time or bytes over rlmeta's, or rlmeta's rate over
Kafka's). With --before, the plot shows the ratios of both runs.
"""
import math
import statistics
import sys
from collections import defaultdict

# metric, label, how it is measured, higher is better, the aim (a ratio), unit
MEASURES = [
    ("decode_mb_s", "decode only", "warm, sequential over the history", True, 3, "MB/s"),
    ("replay_mrec_s", "decode + apply", "warm, sequential over the history", True, 10, "M records/s"),
    ("first_pass_ms", "first pass", "fresh process, one pass", False, 15, "ms"),
    ("bytes_per_live_segment", "memory", "held by the store / live segments", False, None, "B/live segment"),
    ("lookup_ns", "segment_for", "warm, random live offsets", False, None, "ns"),
]
ABSOLUTE_AIMS = {("bytes_per_live_segment", "one"): "<= 150 B", ("bytes_per_live_segment", "three"): ">= 5x",
                 ("lookup_ns", "one"): "<= 150 ns", ("lookup_ns", "three"): "<= 150 ns"}


def read(path):
    data = defaultdict(list)
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 5 and parts[0] == "RESULT":
                _, side, shape, metric, value = parts
                data[(side, shape, metric)].append(float(value))
    return data


def summary(values, higher):
    return statistics.median(values), (max(values) if higher else min(values))


def ratio(data, shape, metric, higher, kafka="kafka"):
    k, r = data.get((kafka, shape, metric)), data.get(("rlmeta", shape, metric))
    if not k or not r:
        return None
    km, rm = statistics.median(k), statistics.median(r)
    return rm / km if higher else km / rm


def fmt(v):
    return f"{v:,.0f}" if v >= 100 else f"{v:,.2f}"


def table(data):
    lines = ["| shape | measure | how | Kafka 4.4.0 median (best) | rlmeta median (best) | unit | rlmeta ahead | aim |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for shape in ("one", "three"):
        for metric, label, how, higher, aim, unit in MEASURES:
            k, r = data.get(("kafka", shape, metric)), data.get(("rlmeta", shape, metric))
            if not k or not r:
                continue
            (km, kb), (rm, rb) = summary(k, higher), summary(r, higher)
            x = ratio(data, shape, metric, higher)
            aim_text = f">= {aim}x" if aim else ABSOLUTE_AIMS.get((metric, shape), "")
            lines.append(f"| {shape} | {label} | {how} | {fmt(km)} ({fmt(kb)}) | {fmt(rm)} ({fmt(rb)}) | {unit} "
                         f"| {x:.1f}x | {aim_text} |")
            t = data.get(("kafka-tuned", shape, metric))
            if t:
                tm, tb = summary(t, higher)
                xt = ratio(data, shape, metric, higher, "kafka-tuned")
                lines.append(f"| {shape} | {label} | same, Kafka on ParallelGC, 4 GB | {fmt(tm)} ({fmt(tb)}) | "
                             f"{fmt(rm)} ({fmt(rb)}) | {unit} | {xt:.1f}x | |")
    n = {s: data.get(("gen", s, "values"), [0])[0] for s in ("one", "three")}
    b = {s: data.get(("gen", s, "bytes"), [0])[0] for s in ("one", "three")}
    checks = {s: len(data.get(("check", s, "same_state"), [])) for s in ("one", "three")}
    foot = [f"history '{s}': {n[s]:,.0f} values, {b[s] / 1e6:.1f} MB; same final state as Kafka in {checks[s]} of {checks[s]} checks"
            for s in ("one", "three")]
    return "\n".join(lines + [""] + foot)


def svg(runs, out):
    """Horizontal bars: rlmeta's advantage per measure and shape (log scale), one bar per run."""
    rows = [(shape, m) for shape in ("one", "three") for m in MEASURES]
    colors = {"before": "#b0b0b0", "after": "#2b6cb0"}
    w, left, top, bar, gap = 760, 260, 40, 12, 10
    lo, hi = math.log10(0.5), math.log10(100)

    def scale(x):
        return left + (w - left - 40) * (math.log10(max(0.5, min(x, 100))) - lo) / (hi - lo)

    h = top + len(rows) * (bar * len(runs) + gap) + 50
    out_lines = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">',
                 f'<text x="{left}" y="20" font-size="14">rlmeta ahead of Kafka 4.4.0 (ratio, log scale; same run, same bytes)</text>']
    for tick in (1, 2, 5, 10, 20, 50, 100):
        x = scale(tick)
        out_lines.append(f'<line x1="{x:.1f}" y1="{top - 5}" x2="{x:.1f}" y2="{h - 40}" stroke="#ddd"/>')
        out_lines.append(f'<text x="{x:.1f}" y="{h - 25}" text-anchor="middle">{tick}x</text>')
    y = top
    for shape, (metric, label, how, higher, aim, unit) in rows:
        out_lines.append(f'<text x="{left - 8}" y="{y + bar * len(runs) / 2 + 4}" text-anchor="end">{label} ({shape} epoch{"s" if shape == "three" else ""})</text>')
        for name, data in runs:
            x = ratio(data, shape, metric, higher)
            if x is not None:
                out_lines.append(f'<rect x="{scale(0.5):.1f}" y="{y}" width="{scale(x) - scale(0.5):.1f}" height="{bar - 2}" fill="{colors[name]}"/>')
                out_lines.append(f'<text x="{scale(x) + 4:.1f}" y="{y + bar - 3}" font-size="10">{x:.1f}x</text>')
            y += bar
        y += gap
    lx = left
    for name, _ in runs:
        out_lines.append(f'<rect x="{lx}" y="{h - 14}" width="10" height="10" fill="{colors[name]}"/><text x="{lx + 14}" y="{h - 5}">{name}</text>')
        lx += 80
    out_lines.append("</svg>")
    with open(out, "w") as f:
        f.write("\n".join(out_lines) + "\n")


def main(argv):
    args, before, out = [], None, None
    it = iter(argv)
    for a in it:
        if a == "--before":
            before = next(it)
        elif a == "--svg":
            out = next(it)
        else:
            args.append(a)
    data = read(args[0])
    print(table(data))
    if out:
        runs = ([("before", read(before))] if before else []) + [("after", data)]
        svg(runs, out)


if __name__ == "__main__":
    main(sys.argv[1:])
