#!/usr/bin/env python3
"""Merges the runs of scripts/side-by-side.sh into one JSON and prints a table.

For each job, rung and shape: the ratio to the same-run anchor of every round, old and new
build, their medians, and new over old. A change holds its performance where new / old of
the medians stays at or above 0.99 (within the noise of interleaved rounds).

    scripts/side_by_side.py RUN_DIR OUTPUT.json
"""
import glob
import json
import os
import re
import statistics
import sys


def main(run_dir, output):
    runs = {}  # (job, build) -> [doc per round]
    for path in sorted(glob.glob(os.path.join(run_dir, "*-*-*.json"))):
        match = re.fullmatch(r"(old|new)-([\w-]+)-(\d+)\.json", os.path.basename(path))
        if not match:
            continue
        build, job, _ = match.groups()
        with open(path) as f:
            runs.setdefault((job, build), []).append(json.load(f))
    if not runs:
        sys.exit(f"side_by_side: no old-*/new-* runs in {run_dir}")

    rows = {}
    builds = {}
    for (job, build), docs in runs.items():
        for doc in docs:
            builds.setdefault(build, {"commit": doc["build"]["commit"], "device": doc["device"].get("gpu")})
            for r in doc["results"]:
                if r.get("anchor"):
                    continue
                key = (job, r["variant"], f'{r["m"]}x{r["n"]}x{r["k"]}')
                row = rows.setdefault(key, {"old": [], "new": [], "verified": True})
                if r.get("ratio_to_anchor") is not None:
                    row[build].append(r["ratio_to_anchor"])
                if r["status"] != "ok" or not r.get("verification", {}).get("passed", False):
                    row["verified"] = False

    results = []
    for (job, variant, shape), row in sorted(rows.items()):
        old = statistics.median(row["old"]) if row["old"] else None
        new = statistics.median(row["new"]) if row["new"] else None
        results.append({
            "job": job, "variant": variant, "shape": shape,
            "old_ratios": row["old"], "new_ratios": row["new"],
            "old_median": old, "new_median": new,
            "new_over_old": new / old if old and new else None,
            "verified": row["verified"],
        })
    doc = {"schema": "gemmlab-side-by-side-1", "builds": builds, "results": results}
    with open(output, "w") as f:
        json.dump(doc, f, indent=2)

    print(f'old {builds.get("old")}  new {builds.get("new")}')
    print(f'{"job":<10} {"variant":<15} {"shape":<15} {"old x anchor":>12} {"new x anchor":>12} {"new/old":>8}  verified')
    for r in results:
        fmt = lambda x: "-" if x is None else f"{x:.3f}"
        print(f'{r["job"]:<10} {r["variant"]:<15} {r["shape"]:<15} {fmt(r["old_median"]):>12} '
              f'{fmt(r["new_median"]):>12} {fmt(r["new_over_old"]):>8}  {"yes" if r["verified"] else "NO"}')


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
