#!/usr/bin/env python3
"""Print the README's table from the run directories under results/cfl.

usage: python3 results/cfl/table.py [DIR]   (DIR defaults to results/cfl)

Each run is DIR/<task>/<model>/lr<LR>/seed<K> with run.json, log.jsonl and,
once finished, summary.json; the test difference comes from DIR/selected.json
(cfl select) when the run was selected and evaluated (matched by
<task>/<model>/lr<LR>/seed<K>, the end of the selected run's directory).
"""
import json
import os
import sys

TASKS = ["marked-reversal", "unmarked-reversal", "padded-reversal", "dyck", "hardest-cfl"]
MODELS = ["rns", "lstm"]
MACHINE = "2-core Xeon VM, shared"  # where every run here ran


def minutes(s):
    return f"{s / 60:.0f} min" if s < 5400 else f"{s / 3600:.1f} h"


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "results/cfl"
    tests = {}
    sel = os.path.join(root, "selected.json")
    if os.path.exists(sel):
        for s in json.load(open(sel))["selected"]:
            if s.get("test_cross_entropy_diff") is not None:
                rel = os.path.join(*os.path.normpath(s["dir"]).split(os.sep)[-4:])
                tests[rel] = s["test_cross_entropy_diff"]
    print("| task | model | lr | best epoch | validation difference | test difference | epochs run | finished | wall time | machine |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for task in TASKS:
        for model in MODELS:
            base = os.path.join(root, task, model)
            runs = []
            if os.path.isdir(base):
                for lr in sorted(os.listdir(base)):
                    for seed in sorted(os.listdir(os.path.join(base, lr))):
                        d = os.path.join(base, lr, seed)
                        if os.path.isdir(d):
                            runs.append(d)
            if not runs:
                print(f"| {task} | {model} | 0.005 | – | – | – | 0 | not started | – | – |")
                continue
            for d in runs:
                run = json.load(open(os.path.join(d, "run.json")))
                lp = os.path.join(d, "log.jsonl")
                log = [json.loads(l) for l in open(lp) if l.strip()] if os.path.exists(lp) else []
                if not log:
                    print(f"| {task} | {model} | {run['lr']} | – | – | – | 0 | started | – | {MACHINE} |")
                    continue
                best = min(log, key=lambda r: r["valid_cross_entropy_diff"])
                done = os.path.exists(os.path.join(d, "summary.json"))
                test = tests.get(os.path.relpath(d, root)) if done else None
                print(f"| {task} | {model} | {run['lr']} | {best['epoch']} | {best['valid_cross_entropy_diff']:.4f} | "
                      f"{'–' if test is None else f'{test:.4f}'} | {log[-1]['epoch']} | "
                      f"{'yes' if done else 'no'} | {minutes(log[-1]['elapsed_seconds'])} | {MACHINE} |")


if __name__ == "__main__":
    main()
