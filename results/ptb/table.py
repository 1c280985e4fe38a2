#!/usr/bin/env python3
"""Print the README's tables from the PTB run directories under results/ptb.

usage: python3 results/ptb/table.py [DIR]   (DIR defaults to results/ptb)

Each run is DIR/<name> with run.json and log.jsonl (one record per epoch:
valid_cross_entropy in nats per token) and, once finished, summary.json,
eval-test.json and sg.json (results/ptb/sync.sh writes them), and where
the model was kept sg-released.json (ptb sg --convention released, the
paper's convention). The first
table has the runs that finished (converged under the paper's schedule),
with the paper's numbers beside ours; the second the runs still training,
as far as their logs go. Runs under DIR/two-epochs are not listed.
"""
import json
import math
import os
import sys

# The paper's test perplexity and SG score (Table 2 and its appendix).
PAPER = {
    "lstm-256": (120.95, 0.433),
    "jm-hidden-247": (115.35, 0.387),
    "rns-1-2": (117.56, 0.435),
    "rns-3-4": (118.09, 0.408),
    "ns-3-4": (122.53, 0.447),
}
LABEL = {"lstm": "LSTM", "jm": "JM", "ns": "NS", "rns": "RNS"}


def name(cfg):
    k = cfg["kind"]
    if k in ("ns", "ns+s", "ns+u", "rns"):
        return f"{k}-{cfg['states']}-{cfg['symbols']}"
    if k == "jm" and cfg.get("push_hidden_state"):
        return f"jm-hidden-{cfg['hidden']}"
    if k == "jm":
        return f"jm-learned-{cfg.get('stack_embedding')}"
    return f"{k}-{cfg['hidden']}"


def load(path):
    with open(path) as f:
        return json.load(f)


def hours(s):
    return f"{s / 3600:.1f} h" if s >= 5400 else f"{s / 60:.0f} min"


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "results/ptb"
    done, going = [], []
    for d in sorted(os.listdir(root)):
        run = os.path.join(root, d)
        if d == "two-epochs" or not os.path.exists(os.path.join(run, "run.json")):
            continue
        rs = load(os.path.join(run, "run.json"))
        log = [json.loads(l) for l in open(os.path.join(run, "log.jsonl")) if l.strip()]
        ppl = [math.exp(r["valid_cross_entropy"]) for r in log]
        best = min(range(len(ppl)), key=lambda i: ppl[i]) if ppl else None
        row = dict(dir=d, model=name(rs["model"]), lr=rs["lr"], clip=rs["clip"], epochs=len(log),
                   best=ppl[best] if ppl else None, best_epoch=best + 1 if ppl else None,
                   last_lr=log[-1]["learning_rate"] if log else rs["lr"],
                   elapsed=log[-1]["elapsed_seconds"] if log else 0)
        if os.path.exists(os.path.join(run, "summary.json")):
            s = load(os.path.join(run, "summary.json"))
            row["params"] = s["parameters"]
            # The kept model's epoch: under an improvement threshold a
            # later epoch may be lower without counting as an improvement.
            if "best_epoch" in s:
                row["best_epoch"], row["best"] = s["best_epoch"], s["best_valid_perplexity"]
            t = os.path.join(run, "eval-test.json")
            row["test"] = load(t)["perplexity"] if os.path.exists(t) else None
            g = os.path.join(run, "sg.json")
            row["sg"] = load(g)["sg_score"] if os.path.exists(g) else None
            row["circuits"] = {c["name"]: c["score"] for c in load(g).get("circuits", [])} if os.path.exists(g) else {}
            # The same suites under the paper's released convention
            # (ptb sg --convention released), where the model was kept.
            gr = os.path.join(run, "sg-released.json")
            row["sg_released"] = load(gr)["sg_score"] if os.path.exists(gr) else None
            row["circuits_released"] = {c["name"]: c["score"] for c in load(gr).get("circuits", [])} if os.path.exists(gr) else {}
            done.append(row)
        else:
            going.append(row)
    print("| model | run | parameters | lr | clip | epochs | best epoch | validation ppl | test ppl | paper's test ppl | SG score (surprisal) | SG score (released convention) | paper's SG score (released convention) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in done:
        p = PAPER.get(r["model"], (None, None))
        fmt = lambda v, f: "–" if v is None else format(v, f)
        released = fmt(r["sg_released"], ".3f") if r["sg_released"] is not None else "– (model not kept)"
        print(f"| {r['model']} | `{r['dir']}` | {r['params']:,} | {r['lr']:.4g} | {r['clip']:.3g} | {r['epochs']} | {r['best_epoch']} | "
              f"{r['best']:.2f} | {fmt(r['test'], '.2f')} | {fmt(p[0], '.2f')} | {fmt(r['sg'], '.3f')} | {released} | {fmt(p[1], '.3f')} |")
    if not done:
        print("| (none has converged yet) | | | | | | | | | | | | |")
    circuits = [c for r in done for c in r.get("circuits", {})]
    circuits = list(dict.fromkeys(circuits))
    if circuits:
        print()
        print("| model | run | " + " | ".join(circuits) + " | SG score |")
        print("|---|---|" + "---|" * (len(circuits) + 1))
        for r in done:
            if r.get("circuits"):
                print(f"| {r['model']} | `{r['dir']}` (surprisal) | " + " | ".join(f"{r['circuits'].get(c, float('nan')):.3f}" for c in circuits) + f" | {r['sg']:.3f} |")
            if r.get("circuits_released"):
                print(f"| {r['model']} | `{r['dir']}` (released convention) | " + " | ".join(f"{r['circuits_released'].get(c, float('nan')):.3f}" for c in circuits) + f" | {r['sg_released']:.3f} |")
    print()
    print("| run | model | lr | clip | epochs done | best validation ppl (epoch) | learning rate of the last epoch | training time so far |")
    print("|---|---|---|---|---|---|---|---|")
    for r in going:
        best = "–" if r["best"] is None else f"{r['best']:.2f} ({r['best_epoch']})"
        print(f"| `{r['dir']}` | {r['model']} | {r['lr']:.4g} | {r['clip']:.3g} | {r['epochs']} | {best} | {r['last_lr']:.4g} | {hours(r['elapsed'])} |")


if __name__ == "__main__":
    main()
