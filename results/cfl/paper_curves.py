#!/usr/bin/env python3
"""The paper's own curves of Figures 1 and 2, from its LaTeX source, beside ours.

usage: python3 results/cfl/paper_curves.py PAPER.tex OUT.csv
       python3 results/cfl/paper_curves.py --compare OUT.csv FIGURES_DIR

The paper (DuSell & Chiang, ICLR 2022; its source as arXiv distributes it)
draws some panels of its Figures 1 and 2 as pgfplots tables written into
the LaTeX source itself: the test panels (Figure 2) of marked reversal,
unmarked reversal and Dyck, and the training panel (Figure 1) of Dyck; the
other panels are separate files that the source does not include. The
first form writes those tables as one CSV, in the columns of `cfl plot`'s
fig1-valid.csv and fig2-test.csv:

    figure,task,model,x,y

with figure fig1 (x the epoch, y the validation difference) or fig2 (x the
length bin, y the test difference), task as our --task names it and model
as our kinds (lstm, gref, jm, ns, ns+s, ns+u, rns). A panel is a training
panel when its x axis starts below 30 (epochs from 1), a test panel when it
starts at the shortest test length (40).

The second form prints, per task and model that both have, the paper's
and our mean test difference over the length bins both have; ours again
with log K/(n+1) added at each length n (K the number of test lengths of
the task), which is what a lower bound of -log p(w | n) alone, without the
length's probability 1/K, adds to a difference; and what is left between
the two, on average and at its largest in one bin. For the training
panels it prints each one's best validation difference and its epoch.
FIGURES_DIR is a `cfl plot --sweep` output directory (fig1-valid.csv,
fig2-test.csv) whose test sets cover every valid length.
"""
import csv
import math
import re
import sys

TITLES = {
    "Marked Reversal": "marked-reversal",
    "Unmarked Reversal": "unmarked-reversal",
    "Padded Reversal": "padded-reversal",
    "Dyck": "dyck",
    "Hardest CFL": "hardest-cfl",
}
LABELS = {"LSTM": "lstm", "Gref": "gref", "JM": "jm", "NS": "ns", "NS+S": "ns+s", "NS+U": "ns+u", "NS+S+U": "rns"}
AXIS = re.compile(r"\\begin\{axis\}\[(.*?)\n\s*\]\s*\n(.*?)\\end\{axis\}", re.S)
PLOT = re.compile(r"\\addplot \[[^\]]*\]\s*table \{%\n(.*?)\};\s*\\addlegendentry\{([^}]*)\}", re.S)


def extract(tex):
    rows, seen = [], set()
    for opts, body in AXIS.findall(tex):
        title = re.search(r"title=\{([^}]*)\}", opts)
        xmin = re.search(r"xmin=([-0-9.]+)", opts)
        if not title or not xmin or title.group(1) not in TITLES:
            continue  # the legend-only axis, or a figure of another section
        task = TITLES[title.group(1)]
        fig = "fig1" if float(xmin.group(1)) < 30 else "fig2"
        plots = PLOT.findall(body)
        if len(plots) != body.count("\\addplot"):
            raise SystemExit(f"{fig} {task}: {body.count(chr(92) + 'addplot')} plots, {len(plots)} of them "
                             "as a table followed by its legend entry: another form, not read")
        for table, label in plots:
            if label not in LABELS:
                raise SystemExit(f"{fig} {task}: unknown legend entry {label!r}")
            if (fig, task, label) in seen:
                raise SystemExit(f"{fig} {task}: a second curve of {label}")
            seen.add((fig, task, label))
            for line in table.strip().splitlines():
                fields = line.split()
                try:
                    x, y = (float(v) for v in fields)
                except ValueError:
                    raise SystemExit(f"{fig} {task} {label}: not a point: {line!r}")
                rows.append((fig, task, LABELS[label], x, y))
    return rows


def read_ours(path, x, y):
    out = {}
    with open(path, encoding="utf-8") as f:
        rows = csv.DictReader(f)
        if y not in (rows.fieldnames or []):
            raise SystemExit(f"{path}: no column {y!r} (columns {rows.fieldnames}); "
                             "compare with a directory of `cfl plot` without --length-conditioned")
        for r in rows:
            if r["in_progress"] == "true":
                continue
            out.setdefault((r["task"], r["model"]), {})[float(r[x])] = float(r[y])
    return out


def compare(paper_csv, figdir):
    paper = {}
    with open(paper_csv, encoding="utf-8") as f:
        for r in csv.DictReader(f):
            paper.setdefault((r["figure"], r["task"], r["model"]), {})[float(r["x"])] = float(r["y"])
    test = read_ours(f"{figdir}/fig2-test.csv", "length", "test_difference")
    valid = read_ours(f"{figdir}/fig1-valid.csv", "epoch", "valid_difference")
    order = list(LABELS.values())
    print("| task | model | paper: mean test difference | ours | ours + log K/(n+1) | paper − (ours + log K/(n+1)): mean; largest in a bin |")
    print("|---|---|---|---|---|---|")
    for (fig, task, model), p in sorted(paper.items(), key=lambda kv: (kv[0][1], order.index(kv[0][2]))):
        if fig != "fig2" or (task, model) not in test:
            continue
        o = test[(task, model)]
        bins = sorted(set(p) & set(o))
        if not bins:
            continue
        # Our lower bound gives each of the K test lengths probability
        # 1/K; a bound of -log p(w | n) alone is log K/(n+1) nats per
        # symbol lower at length n, and the difference that much higher.
        k = len({b for (t, _), d in test.items() if t == task for b in d})
        shifted = {b: o[b] + math.log(k) / (b + 1) for b in bins}
        mean = lambda d: sum(d[b] for b in bins) / len(bins)
        gap = max(bins, key=lambda b: abs(p[b] - shifted[b]))
        print(f"| {task} | {model} | {mean(p):.4f} | {mean(o):.4f} | {mean(shifted):.4f} | "
              f"{mean(p) - mean(shifted):+.4f}; {p[gap] - shifted[gap]:+.4f} at length {gap:g} |")
    print()
    print("| task | model | paper: best validation difference (epoch) | ours (epoch) |")
    print("|---|---|---|---|")
    for (fig, task, model), p in sorted(paper.items(), key=lambda kv: (kv[0][1], order.index(kv[0][2]))):
        if fig != "fig1":
            continue
        pe = min(p, key=p.get)
        ours = "–"
        if (task, model) in valid:
            o = valid[(task, model)]
            oe = min(o, key=o.get)
            ours = f"{o[oe]:.4f} ({oe:g})"
        print(f"| {task} | {model} | {p[pe]:.4f} ({pe:g}) | {ours} |")


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--compare":
        compare(sys.argv[2], sys.argv[3])
        return
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    with open(sys.argv[1], encoding="utf-8") as f:
        rows = extract(f.read())
    if not rows:
        raise SystemExit(f"{sys.argv[1]}: no figure tables found")
    with open(sys.argv[2], "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["figure", "task", "model", "x", "y"])
        for fig, task, model, x, y in rows:
            w.writerow([fig, task, model, f"{x:g}", repr(y)])
    print(f"{sys.argv[2]}: {len(rows)} points", file=sys.stderr)


if __name__ == "__main__":
    main()
