#!/usr/bin/env python3
"""Speedup of each convgen algorithm over cuDNN, per layer and pass, from a convgen-bench CSV.

usage: plot.py BENCH.csv OUT.png [TITLE]
One panel per pass; bars for the speedup over cuDNN's best strict-fp32 and TF32 algorithms
(cuDNN time / convgen time, log scale; above 1 means convgen is faster).
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PASSES = ["fprop", "bprop", "accgrad"]


def load(path):
    with open(path, newline="") as f:
        return [r for r in csv.DictReader(f) if r["implementation"] == "convgen" and float(r["ms"]) > 0]


def panel(ax, rows, pass_name, algos):
    rows = [r for r in rows if r["pass"] == pass_name]
    layers = list(dict.fromkeys(r["layer"] for r in rows))
    width = 0.8 / (2 * len(algos))
    for a, algo in enumerate(algos):
        for m, (column, label) in enumerate([("speedup_vs_cudnn_fp32", "fp32"), ("speedup_vs_cudnn_tf32", "TF32")]):
            values = {r["layer"]: float(r[column]) for r in rows if r["algorithm"] == algo}
            xs = [i + (2 * a + m) * width - 0.4 + width / 2 for i in range(len(layers))]
            ax.bar(xs, [values.get(layer, float("nan")) for layer in layers], width,
                   label=f"{algo} vs cuDNN {label}")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_ylabel(f"{pass_name}: speedup")
    ax.set_xticks(range(len(layers)))
    ax.set_xticklabels(layers, rotation=90, fontsize=8)
    ax.grid(axis="y", which="both", alpha=0.3)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    rows = load(sys.argv[1])
    algos = list(dict.fromkeys(r["algorithm"] for r in rows))
    fig, axes = plt.subplots(len(PASSES), 1, figsize=(14, 10), sharex=False)
    for ax, pass_name in zip(axes, PASSES):
        panel(ax, rows, pass_name, algos)
    axes[0].legend(fontsize=8, ncol=2)
    fig.suptitle(sys.argv[3] if len(sys.argv) > 3 else "convgen speedup over cuDNN (> 1: convgen faster)")
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)


if __name__ == "__main__":
    main()
