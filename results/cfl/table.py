#!/usr/bin/env python3
"""Print the README's table from the run directories of the §4 runs.

usage: python3 results/cfl/table.py [SWEEP [ALSO ...]]
       (default: results/cfl results/cfl-compare results/cfl-ur-rns results/cfl-plateau
       results/cfl-plateau-lr01 results/cfl-plateau-nss, those that exist)
       python3 results/cfl/table.py --selected SWEEP

       python3 results/cfl/table.py --restarts DIR [EARLIER ...]

The third form summarizes restarts: one row per task, model and learning
rate of the runs under DIR, with the runs under the EARLIER directories
of the same task, model and rate added (the seed 1 runs of
results/cfl-compare beside the restarts of results/cfl-ablation, say):
the number of finished runs, the best, median and worst of their best
validation differences, with the seeds of the best and worst (unfinished
runs counted apart, not ranked).

The second form prints the selection of SWEEP/selected.json (cfl select)
as one row per task and one column per model: the selected run's best
validation difference and, in parentheses, its test difference, in bold
where the validation difference is within 0.05 nats of the bound; "–"
where the model has no finished run on the task.

Each run is DIR/<task>/<model>/lr<LR>/seed<K> with run.json, log.jsonl and,
once finished, summary.json, where <model> is the kind (lstm, rns, ns, ...)
or, for Gref and JM, the kind and the stack-vector size (gref-e20), or
jm-hidden for JM pushing the hidden state. The paper's five tasks come
first, then the 2023 tasks in the order of TASKS_2023, then any other task
by name. The test
difference comes from SWEEP/selected.json (cfl select --sweep SWEEP --also
ALSO ...) when the run was selected and evaluated, else from the
selected.json of the run's own directory, matched by the run's directory
(or, for a selection made where the runs were before their files were
copied here, by <task>/<model>/lr<LR>/seed<K>, the end of its directory).
"""
import json
import os
import sys

TASKS = ["marked-reversal", "unmarked-reversal", "padded-reversal", "dyck", "hardest-cfl"]
# The 2023 tasks: the three of the evidence runs first, then the rest.
TASKS_2023 = ["count-3", "marked-copy", "unmarked-copy-different-alphabets", "unmarked-copy",
              "marked-reverse-and-copy", "unmarked-reverse-and-copy", "count-and-copy"]
# The directories of the §4 runs, read when none is given.
DEFAULT_ROOTS = ["results/cfl", "results/cfl-compare", "results/cfl-ur-rns", "results/cfl-plateau",
                 "results/cfl-plateau-lr01", "results/cfl-plateau-nss"]
# The paper's order of the models.
MODELS = ["lstm", "gref", "jm", "ns", "ns+s", "ns+u", "rns"]
# Where the runs of each directory ran.
MACHINES = {
    "cfl": "2-core Xeon VM, shared",
    "cfl-compare": "2-core VM, shared (AMD EPYC; Intel Xeon from Nov 24, 19:21 UTC)",
    "cfl-ur-rns": "2-core AMD EPYC VM, shared",
    "cfl-plateau": "2-core AMD EPYC VM, shared",
    "cfl-plateau-lr01": "2-core Intel Xeon VM, shared",
    "cfl-plateau-nss": "2-core Intel Xeon VM, shared",
    "cfl-2023": "2-core Intel Xeon VM, shared",
}
# Runs of a directory that ran elsewhere: (directory, task, model) → machine.
RUN_MACHINES = {
    ("cfl-2023", "marked-copy", "rns"): "2-core AMD EPYC (Zen 5) VM, alone from epoch 3",
    ("cfl-2023", "unmarked-copy-different-alphabets", "rns"): "2-core AMD EPYC (Zen 5) VM, alone from epoch 3",
}


def task_key(t):
    """Sorts the paper's tasks first, then the 2023 tasks, then any other by name."""
    order = TASKS + TASKS_2023
    return (order.index(t) if t in order else len(order), t)


def minutes(s):
    return f"{s / 60:.0f} min" if s < 5400 else f"{s / 3600:.1f} h"


def tail(path, n=4):
    return os.path.join(*os.path.normpath(path).split(os.sep)[-n:])


def model_dirs(root, task, model):
    """The directories of a model's runs on a task, by stack size."""
    base = os.path.join(root, task)
    if not os.path.isdir(base):
        return []
    out = []
    for name in os.listdir(base):
        if name == model:
            out.append((0, name))
        elif name == model + "-hidden":
            out.append((-1, name))
        elif name.startswith(model + "-e") and name[len(model) + 2:].isdigit():
            out.append((int(name[len(model) + 2:]), name))
    return [os.path.join(base, name) for _, name in sorted(out)]


def runs_of(mdir):
    runs = []
    for lr in sorted(os.listdir(mdir)):
        if not lr.startswith("lr") or not os.path.isdir(os.path.join(mdir, lr)):
            continue  # not a run's learning rate (results/cfl/actions holds Figure 3's data)
        for seed in sorted(os.listdir(os.path.join(mdir, lr))):
            d = os.path.join(mdir, lr, seed)
            if os.path.isfile(os.path.join(d, "run.json")):
                runs.append(d)
    return runs


def restarts_table(roots):
    """Per task, model and learning rate of roots[0]'s runs: the finished runs' best validation differences."""
    groups = {}
    for i, root in enumerate(roots):
        for task in sorted(os.listdir(root), key=task_key):
            for model in MODELS:
                for mdir in model_dirs(root, task, model):
                    for d in runs_of(mdir):
                        run = json.load(open(os.path.join(d, "run.json")))
                        key = (task, model, run["lr"])
                        if i > 0 and key not in groups:
                            continue  # not a row of DIR's
                        g = groups.setdefault(key, {"done": [], "open": 0})
                        lp = os.path.join(d, "log.jsonl")
                        log = [json.loads(l) for l in open(lp) if l.strip()] if os.path.exists(lp) else []
                        if not os.path.exists(os.path.join(d, "summary.json")) or not log:
                            g["open"] += 1
                            continue
                        g["done"].append((min(r["valid_cross_entropy_diff"] for r in log), run["seed"]))
    print("| task | model | lr | finished | best (seed) | median | worst (seed) | unfinished |")
    print("|---|---|---|---|---|---|---|---|")
    order = lambda k: (task_key(k[0]), MODELS.index(k[1]), -k[2])
    for (task, model, lr) in sorted(groups, key=order):
        g = groups[(task, model, lr)]
        done = sorted(g["done"])
        if done:
            n = len(done)
            vals = [v for v, _ in done]
            med = vals[n // 2] if n % 2 else (vals[n // 2 - 1] + vals[n // 2]) / 2
            cells = f"{n} | {vals[0]:.4f} ({done[0][1]}) | {med:.4f} | {vals[-1]:.4f} ({done[-1][1]})"
        else:
            cells = "0 | – | – | –"
        print(f"| {task} | {model} | {lr} | {cells} | {g['open']} |")


def selected_table(root):
    sel = json.load(open(os.path.join(root, "selected.json")))["selected"]
    cells = {(s["task"], s["model"]): s for s in sel}
    tasks = sorted({t for t, _ in cells}, key=task_key)
    models = [m for m in MODELS if m in {k for _, k in cells}]
    names = {"lstm": "LSTM", "gref": "Gref", "jm": "JM", "ns": "NS", "ns+s": "NS+S", "ns+u": "NS+U", "rns": "NS+S+U (RNS)"}
    # A JM that pushes the hidden state (the 2023 release's) says so.
    jms = [s for s in sel if s["model"] == "jm"]
    if jms and all(s.get("push_hidden_state") for s in jms):
        names["jm"] = "JM (hidden state)"
    print("| task | " + " | ".join(names[m] for m in models) + " |")
    print("|---|" + "---|" * len(models))
    for task in tasks:
        row = []
        for model in models:
            s = cells.get((task, model))
            if s is None:
                row.append("–")
                continue
            v = s["valid_cross_entropy_diff"]
            cell = f"{v:.4f}"
            if v <= 0.05:
                cell = f"**{cell}**"
            t = s.get("test_cross_entropy_diff")
            row.append(cell + ("" if t is None else f" ({t:.4f})"))
        print(f"| {task} | " + " | ".join(row) + " |")


def main():
    if sys.argv[1:2] in (["-h"], ["--help"]):
        print(__doc__.strip())
        return
    for a in sys.argv[1:]:
        if a.startswith("-") and a not in ("--selected", "--restarts"):
            sys.exit(f"table.py: unknown flag {a} (see --help)")
        if not a.startswith("-") and not os.path.isdir(a):
            sys.exit(f"table.py: {a}: no such directory")
    if sys.argv[1:2] == ["--restarts"]:
        if len(sys.argv) < 3:
            sys.exit("usage: table.py --restarts DIR [EARLIER ...]")
        restarts_table(sys.argv[2:])
        return
    if sys.argv[1:2] == ["--selected"]:
        if len(sys.argv) != 3:
            sys.exit("usage: table.py --selected SWEEP")
        selected_table(sys.argv[2])
        return
    roots = sys.argv[1:] or [d for d in DEFAULT_ROOTS if os.path.isdir(d)]
    # Test differences from each directory's selected.json, by run
    # directory; a selection made elsewhere (its runs copied here since) is
    # matched by <task>/<model>/lr<LR>/seed<K> among its own directory's
    # runs. The first directory's selection comes first.
    tests, tests_by_tail = {}, {}
    for root in reversed(roots):
        sel = os.path.join(root, "selected.json")
        if not os.path.exists(sel):
            continue
        for s in json.load(open(sel))["selected"]:
            if s.get("test_cross_entropy_diff") is not None:
                tests[os.path.normpath(s["dir"])] = s["test_cross_entropy_diff"]
                tests_by_tail[(os.path.normpath(root), tail(s["dir"]))] = s["test_cross_entropy_diff"]
    # Models and tasks without a run are left out; a model with runs on
    # some tasks shows "not started" on the others.
    found = sorted({t for r in roots for t in os.listdir(r) if os.path.isdir(os.path.join(r, t))})
    found.sort(key=task_key)
    has_runs = lambda r, t, m: any(runs_of(d) for d in model_dirs(r, t, m))
    present = [m for m in MODELS if any(has_runs(r, t, m) for r in roots for t in found)]
    tasks = [t for t in found if any(has_runs(r, t, m) for r in roots for m in MODELS)]
    print("| task | model | stack | lr | seed | best epoch | validation difference | test difference | epochs run | finished | wall time | machine |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for task in tasks:
        for model in present:
            runs = []
            for root in roots:
                base = os.path.basename(os.path.normpath(root))
                machine = RUN_MACHINES.get((base, task, model), MACHINES.get(base, "–"))
                for mdir in model_dirs(root, task, model):
                    runs += [(d, machine, root) for d in runs_of(mdir)]
            if not runs:
                print(f"| {task} | {model} | – | – | – | – | – | – | 0 | not started | – | – |")
                continue
            for d, machine, root in runs:
                run = json.load(open(os.path.join(d, "run.json")))
                cfg = run["model"]
                if cfg.get("push_hidden_state"):
                    stack = "hidden state"
                elif cfg.get("stack_embedding"):
                    stack = f"m = {cfg['stack_embedding']}"
                elif cfg.get("states"):
                    stack = f"\\|Q\\| = {cfg['states']}, \\|Γ\\| = {cfg['symbols']}"
                    if cfg.get("bottom") == 1:  # stacks.Fixed (ICLR 2023)
                        stack += ", fixed bottom"
                else:
                    stack = "–"
                lp = os.path.join(d, "log.jsonl")
                log = [json.loads(l) for l in open(lp) if l.strip()] if os.path.exists(lp) else []
                head = f"| {task} | {model} | {stack} | {run['lr']} | {run['seed']} |"
                if not log:
                    print(f"{head} – | – | – | 0 | started | – | {machine} |")
                    continue
                best = min(log, key=lambda r: r["valid_cross_entropy_diff"])
                done = os.path.exists(os.path.join(d, "summary.json"))
                test = None
                if done:
                    test = tests.get(os.path.normpath(d), tests_by_tail.get((os.path.normpath(root), tail(d))))
                print(f"{head} {best['epoch']} | {best['valid_cross_entropy_diff']:.4f} | "
                      f"{'–' if test is None else f'{test:.4f}'} | {log[-1]['epoch']} | "
                      f"{'yes' if done else 'no'} | {minutes(log[-1]['elapsed_seconds'])} | {machine} |")


if __name__ == "__main__":
    main()
