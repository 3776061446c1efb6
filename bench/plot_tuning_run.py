#!/usr/bin/env python3
"""The learning curves of a `kwb train tune` run as an SVG, and its figures as Markdown tables.

    plot_tuning_run.py RUN_FOLDER_OR_PREFIX --svg OUT.svg

RUN_FOLDER_OR_PREFIX is a run's folder (samples.jsonl, summary.json) or the common prefix of
files copied into bench/results (PREFIX-samples.jsonl, PREFIX-summary.json).

Per training step and training space: the mean training reward and the geometric-mean speed-up
against eager of the policy's samples, beside the frozen start policy's and the random-choice
baseline's means (dashed). Written with the standard library only: the project's Python has no
plotting package, and a line chart is a few SVG elements.
"""

import argparse
import json
import math
import os
import sys
from collections import defaultdict

COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]


def read_run(where):
    def path(name):
        folder = os.path.join(where, name)
        return folder if os.path.isdir(where) else f"{where}-{name}"
    samples = [json.loads(line) for line in open(path("samples.jsonl")) if line.strip()]
    summary_path = path("summary.json")
    summary = json.load(open(summary_path)) if os.path.exists(summary_path) else {}
    return samples, summary


def geometric_mean(values):
    values = [v for v in values if v > 0]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def mean(values):
    return sum(values) / len(values) if values else float("nan")


def measured(samples):
    return [s for s in samples if "error" not in s]


def figures(rows):
    rows = measured(rows)
    return {"n": len(rows),
            "reward": mean([s["reward"] for s in rows]),
            "training_reward": mean([s["training_reward"] for s in rows]),
            "speedup": geometric_mean([s["speedup_vs_eager"] for s in rows if s["correct"]]),
            "pass_rate": mean([1.0 if s["correct"] else 0.0 for s in rows])}


def curves(samples):
    """space -> [(step, figures)] for the training phase."""
    by_space = defaultdict(lambda: defaultdict(list))
    for s in samples:
        if s["phase"] == "train":
            by_space[s["space"]][s["step"]].append(s)
    return {space: sorted((step, figures(rows)) for step, rows in steps.items())
            for space, steps in by_space.items()}


def phase_figures(samples, phase, space):
    return figures([s for s in samples if s["phase"] == phase and s["space"] == space])


def panel(x0, y0, width, height, title, series, references, y_label):
    """One chart: series is [(label, colour, [(x, y)])], references [(label, colour, y)]."""
    values = [y for _, _, points in series for _, y in points if not math.isnan(y)]
    values += [y for _, _, y in references if not math.isnan(y)]
    steps = [x for _, _, points in series for x, _ in points]
    if not values or not steps:
        return []
    low, high = min(values), max(values)
    pad = (high - low) * 0.1 or 0.5
    low, high = low - pad, high + pad
    first, last = min(steps), max(max(steps), min(steps) + 1)

    def sx(x):
        return x0 + 50 + (x - first) / (last - first) * (width - 70)

    def sy(y):
        return y0 + height - 30 - (y - low) / (high - low) * (height - 60)

    out = [f'<text x="{x0 + width / 2}" y="{y0 + 16}" text-anchor="middle" '
           f'font-size="14">{title}</text>',
           f'<line x1="{x0 + 50}" y1="{y0 + height - 30}" x2="{x0 + width - 20}" '
           f'y2="{y0 + height - 30}" stroke="#444"/>',
           f'<line x1="{x0 + 50}" y1="{y0 + 30}" x2="{x0 + 50}" y2="{y0 + height - 30}" '
           f'stroke="#444"/>',
           f'<text x="{x0 + width / 2}" y="{y0 + height - 5}" text-anchor="middle" '
           f'font-size="11">training step</text>',
           f'<text x="{x0 + 12}" y="{y0 + height / 2}" font-size="11" text-anchor="middle" '
           f'transform="rotate(-90 {x0 + 12} {y0 + height / 2})">{y_label}</text>']
    for i in range(5):
        y = low + (high - low) * i / 4
        out.append(f'<text x="{x0 + 45}" y="{sy(y) + 4:.1f}" font-size="10" '
                   f'text-anchor="end">{y:.2f}</text>')
    for x in range(first, last + 1):
        out.append(f'<text x="{sx(x):.1f}" y="{y0 + height - 17}" font-size="10" '
                   f'text-anchor="middle">{x}</text>')
    legend = y0 + 34
    for label, colour, y in references:
        if math.isnan(y):
            continue
        out.append(f'<line x1="{x0 + 50}" y1="{sy(y):.1f}" x2="{x0 + width - 20}" '
                   f'y2="{sy(y):.1f}" stroke="{colour}" stroke-dasharray="5,4"/>')
        out.append(f'<text x="{x0 + width - 22}" y="{sy(y) - 3:.1f}" font-size="10" '
                   f'text-anchor="end" fill="{colour}">{label}</text>')
    for label, colour, points in series:
        points = [(x, y) for x, y in points if not math.isnan(y)]
        if not points:
            continue
        path = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in points)
        out.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for x, y in points:
            out.append(f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="3" fill="{colour}"/>')
        out.append(f'<text x="{x0 + 60}" y="{legend}" font-size="11" fill="{colour}">'
                   f'{label}</text>')
        legend += 14
    return out


def svg(samples, summary, title):
    train_curves = curves(samples)
    spaces = sorted(train_curves)
    width, height = 900, 320
    body = []
    for row, (key, label) in enumerate([("training_reward", "mean training reward"),
                                        ("speedup", "speed-up vs eager (geometric mean)")]):
        series, references = [], []
        for i, space in enumerate(spaces):
            colour = COLOURS[i % len(COLOURS)]
            series.append((f"{space}: policy during training", colour,
                           [(step, f[key]) for step, f in train_curves[space]]))
            references.append((f"{space} start", colour,
                               phase_figures(samples, "start", space)[key]))
            references.append((f"{space} random", "#999999",
                               phase_figures(samples, "random", space)[key]))
        body += panel(0, row * height, width, height, f"{title}: {label}", series, references,
                      label)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{2 * height}" '
            f'font-family="sans-serif"><rect width="100%" height="100%" fill="white"/>'
            + "".join(body) + "</svg>\n")


def tables(samples):
    lines = ["| space | phase | samples | mean reward | mean training reward | "
             "speed-up vs eager (geo. mean) | pass rate |", "|---|---|---|---|---|---|---|"]
    spaces = sorted({s["space"] for s in samples})
    for space in spaces:
        for phase in ("start", "random", "final"):
            f = phase_figures(samples, phase, space)
            if f["n"]:
                lines.append(f"| {space} | {phase} | {f['n']} | {f['reward']:.2f} | "
                             f"{f['training_reward']:.2f} | {f['speedup']:.2f}x | "
                             f"{f['pass_rate']:.0%} |")
    if not curves(samples):
        return "\n".join(lines + ["", "(no training step finished)"])
    lines += ["", "| step | " + " | ".join(f"{s} training reward | {s} speed-up"
                                             for s in sorted(curves(samples))) + " |",
              "|---|" + "---|---|" * len(curves(samples))]
    by_step = defaultdict(dict)
    for space, points in curves(samples).items():
        for step, f in points:
            by_step[step][space] = f
    for step in sorted(by_step):
        cells = []
        for space in sorted(curves(samples)):
            f = by_step[step].get(space)
            cells += [f"{f['training_reward']:.2f}", f"{f['speedup']:.2f}x"] if f else ["", ""]
        lines.append(f"| {step} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", help="a run's folder, or the prefix of its copied files")
    parser.add_argument("--svg", help="write the curves here")
    parser.add_argument("--title", default="kwb train tune")
    args = parser.parse_args()
    samples, summary = read_run(args.run)
    if not samples:
        raise SystemExit(f"{args.run}: no samples")
    if args.svg and curves(samples):
        with open(args.svg, "w") as f:
            f.write(svg(samples, summary, args.title))
    print(tables(samples))


if __name__ == "__main__":
    sys.exit(main())
