"""What the scripts of gemmlab's own jobs share (out_of_core.py for `bench --out-of-core`,
distributed.py for `bench --distributed`): loading a run of one command, which records were
timed, where a shape sits on the size axis, and the cells their tables write alike.

Imported, not run: scripts/ is on the path of each script run as `python3 scripts/NAME.py`
and of scripts/regenerate.py, which imports them.
"""
import argparse
import json
import os
import sys

import plot as bench_plot


def load_run(path, command):
    """The run in `path`; exits where its schema_version is unknown or its command another's."""
    with open(path) as f:
        doc = json.load(f)
    if doc.get("schema_version") not in bench_plot.SCHEMA_VERSIONS:
        sys.exit(f"{path}: unsupported schema_version {doc.get('schema_version')}")
    if doc.get("command") != command:
        sys.exit(f"{path}: command {doc.get('command')!r}, not {command!r}")
    return doc


def timed(r):
    return r.get("status") == "ok" and "gflops" in r and "time_ms" in r


def shape(r):
    return r["m"], r["n"], r["k"]


def size_x(s):
    """Where a shape sits on the size axis: n when square, else the cube root of m*n*k."""
    m, n, k = s
    return n if m == n == k else (m * n * k) ** (1 / 3)


def size_label(s):
    m, n, k = s
    return f"{n}³" if m == n == k else f"{m}×{n}×{k}"


def figure(x):
    """Two decimals, or two significant digits below 0.1."""
    return f"{x:.2f}" if x >= 0.1 else f"{x:.2g}"


def verified_cell(r):
    """A table's verification cell: passed or failed, and whether only a sample was checked."""
    v = r.get("verification")
    return "–" if not v else ("passed" if v.get("passed") else "**failed**") + \
        (" (sampled)" if v.get("mode") == "sampled" else "")


def size_axis(ax, shapes, fontsize):
    """A log2 size axis with a labelled tick at each shape (sorted by size_x); a lone shape an
    octave either side. No shapes: matplotlib's own ticks."""
    from matplotlib.ticker import NullLocator

    ax.set_xscale("log", base=2)
    if shapes:
        ax.set_xticks([size_x(s) for s in shapes])
        ax.set_xticklabels([size_label(s) for s in shapes], fontsize=fontsize,
                           rotation=0 if all(m == n == k for m, n, k in shapes) else 30, ha="right")
        if len(shapes) == 1:
            ax.set_xlim(size_x(shapes[0]) / 2, size_x(shapes[0]) * 2)
    ax.xaxis.set_minor_locator(NullLocator())


def annotate_block_dim(ax, x, y, block_dim):
    """cublasXt's blockDim beside its point: b4096."""
    ax.annotate(f"b{block_dim}", (x, y), textcoords="offset points", xytext=(4, -10), fontsize=6)


def main(script, description, plot, markdown_table, several):
    """A job script's command line: `plot RESULTS --out PNG` and `table RESULTS`, with one
    results file or (several) one or more; plot's PNG defaults to the (first) file's, .png for .json."""
    p = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    a = sub.add_parser("plot")
    a.add_argument("results", nargs="+" if several else None)
    a.add_argument("--out", help=f"the PNG (default: {'the first ' if several else ''}RESULTS with .png for .json)")
    t = sub.add_parser("table")
    t.add_argument("results", nargs="+" if several else None)
    args = p.parse_args()
    if args.command == "plot":
        bench_plot.ensure_matplotlib(script)
        first = args.results[0] if several else args.results
        plot(args.results, args.out or os.path.splitext(first)[0] + ".png")
    else:
        print(markdown_table(args.results))
