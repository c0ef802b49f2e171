#!/usr/bin/env python3
"""The plot of `make bench-scale` (issue 30): start-up and memory against the history's records.

Reads the `[bench]` lines of one or more runs (build/bench-scale-SIZE.log, or the copies kept under
docs/bench/scale-SIZE.txt) and writes one SVG of two panels: seconds from configure() to every hosted
partition ready (medians) for the stock manager, the plugin and the bare consumer (the floor) on the
append-only topic, and the plugin and the floor on the compacted topic; and the memory a manager
holds when ready (retained heap + anonymous memory outside the heap, median of its rounds hosting
2,000 partitions). It only draws what the logs say: a size whose run did not reach a case has no
point for it. No dependencies; no timing of its own.

Usage: tools/bench/scale_plot.py OUT.svg LOG...
"""
import math
import re
import statistics
import sys

CASES = [  # (label, median line prefix, per-round line prefix, colour, dashed)
    ("stock manager, append-only", "stock TBRLMM, append-only: median", "stock TBRLMM, append-only #", "#c0392b", False),
    ("plugin, append-only", "plugin, append-only: median", "plugin, append-only #", "#2471a3", False),
    ("floor, append-only", "floor: a bare KafkaConsumer reading the append-only topic", None, "#7f8c8d", False),
    ("plugin, compacted", "plugin, compacted: median", "plugin, compacted #", "#2471a3", True),
    ("floor, compacted", "floor: a bare KafkaConsumer reading the compacted topic", None, "#7f8c8d", True),
]


def read(path):
    """{records, seconds: {label: median}, memory: {label: MB}} of one run's [bench] lines."""
    run = {"records": None, "seconds": {}, "memory": {}}
    mem = {}
    for line in open(path, encoding="utf-8"):
        line = line.strip()
        if not line.startswith("[bench] "):
            continue
        body = line[len("[bench] "):]
        m = re.match(r"append-only history: (\d+) records", body)
        if m:
            run["records"] = int(m.group(1))
        for label, median, per_round, _, _ in CASES:
            if body.startswith(median):
                m = re.search(r"median ([0-9.]+) s", body)
                if m:
                    run["seconds"][label] = float(m.group(1))
            if per_round and body.startswith(per_round) and "ready for 2000" in body:
                m = re.search(r"retained heap ([0-9.]+) MB, anonymous memory outside the heap \+(-?[0-9.]+) MB", body)
                if m:
                    mem.setdefault(label, []).append(float(m.group(1)) + float(m.group(2)))
    run["memory"] = {k: statistics.median(v) for k, v in mem.items()}
    if run["records"] is None:
        raise SystemExit(f"scale_plot: {path}: no 'append-only history: N records' line")
    return run


def panel(x0, title, unit, runs, key, labels):
    """One panel's SVG elements: axes (records on a log scale), a polyline and points per case."""
    w, h, left, top = 420, 260, 60, 40
    xs = sorted({r["records"] for r in runs})
    ymax = max([r[key][k] for r in runs for k in r[key] if k in labels] + [1e-9]) * 1.15
    lo, hi = min(xs) / 1.5, max(xs) * 1.5

    def px(n):
        return x0 + left + (math.log(n) - math.log(lo)) / (math.log(hi) - math.log(lo)) * w

    def py(v):
        return top + h - v / ymax * h

    out = [f'<text x="{x0 + left + w / 2}" y="22" text-anchor="middle" font-size="14">{title}</text>',
           f'<line x1="{x0 + left}" y1="{top + h}" x2="{x0 + left + w}" y2="{top + h}" stroke="#000"/>',
           f'<line x1="{x0 + left}" y1="{top}" x2="{x0 + left}" y2="{top + h}" stroke="#000"/>']
    for n in xs:
        out.append(f'<text x="{px(n):.1f}" y="{top + h + 16}" text-anchor="middle" font-size="11">{n / 1e6:g} M</text>')
    for i in range(5):
        v = ymax / 1.15 * i / 4
        out.append(f'<text x="{x0 + left - 6}" y="{py(v) + 4:.1f}" text-anchor="end" font-size="11">{v:.3g}</text>')
        out.append(f'<line x1="{x0 + left}" y1="{py(v):.1f}" x2="{x0 + left + w}" y2="{py(v):.1f}" stroke="#ddd"/>')
    out.append(f'<text x="{x0 + left + w / 2}" y="{top + h + 34}" text-anchor="middle" font-size="11">'
               f'records in the history (log scale)</text>')
    out.append(f'<text x="{x0 + 14}" y="{top + h / 2}" font-size="11" transform="rotate(-90 {x0 + 14} {top + h / 2})" '
               f'text-anchor="middle">{unit}</text>')
    for label, _, _, colour, dashed in CASES:
        if label not in labels:
            continue
        pts = [(px(r["records"]), py(r[key][label])) for r in runs if label in r[key]]
        if not pts:
            continue
        dash = ' stroke-dasharray="5,4"' if dashed else ""
        if len(pts) > 1:
            out.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2"{dash} points="'
                       + " ".join(f"{x:.1f},{y:.1f}" for x, y in pts) + '"/>')
        for x, y in pts:
            out.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="{colour}"/>')
    return out


def main(argv):
    if len(argv) < 3:
        raise SystemExit(__doc__)
    runs = sorted((read(p) for p in argv[2:]), key=lambda r: r["records"])
    body = panel(0, "start-up: configure() to every hosted partition ready (median)", "seconds", runs,
                 "seconds", [c[0] for c in CASES])
    body += panel(520, "memory when ready, hosting 2,000 partitions (heap + outside)", "MB", runs, "memory",
                  ["stock manager, append-only", "plugin, append-only", "plugin, compacted"])
    legend = []
    for i, (label, _, _, colour, dashed) in enumerate(CASES):
        x, y = 70 + (i % 3) * 300, 360 + (i // 3) * 18
        dash = ' stroke-dasharray="5,4"' if dashed else ""
        legend.append(f'<line x1="{x}" y1="{y}" x2="{x + 24}" y2="{y}" stroke="{colour}" stroke-width="2"{dash}/>'
                      f'<text x="{x + 30}" y="{y + 4}" font-size="12">{label}</text>')
    svg = ('<svg xmlns="http://www.w3.org/2000/svg" width="1040" height="410" font-family="sans-serif">'
           '<rect width="100%" height="100%" fill="#fff"/>' + "".join(body + legend) + "</svg>\n")
    with open(argv[1], "w", encoding="utf-8") as f:
        f.write(svg)
    for r in runs:
        print(f"scale_plot: {r['records']:,} records: seconds {r['seconds']}, MB {r['memory']}")


if __name__ == "__main__":
    main(sys.argv)
