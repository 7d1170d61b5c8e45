#!/usr/bin/env bash
# Session 16: cuBLAS's bf16 kernel at 4096^3 per SASS instruction (Nsight Compute source page:
# its nvjet kernels are not in libcublasLt's fatbins as functions cuobjdump finds), to see
# how its epilogue gets C into shared memory.
set -uo pipefail
cd "$(dirname "$0")/../.."
O=$OUT/p; mkdir -p $O build-device
xz -dc scratch/bin/gemmlab.xz > build-device/gemmlab; chmod +x build-device/*
G=build-device/gemmlab
timeout 200 ncu --kernel-name regex:nvjet --launch-skip 2 --launch-count 1 --section SourceCounters --section WarpStateStats \
  --page source --print-source sass --csv \
  $G bench --backend cuda --dtype bf16 --variants cublas_bf16 --trans NN --sizes 4096 --reps 2 --warmup 2 --min-time 0 --no-verify > $O/cublas-bf16-source.csv 2> $O/err.txt
echo "rows $(wc -l < $O/cublas-bf16-source.csv)"
python3 - $O/cublas-bf16-source.csv <<'PY'
import csv, sys, re, collections
rows = list(csv.reader(open(sys.argv[1])))
hi = next(i for i, r in enumerate(rows) if "Source" in r and "Address" in r)
hdr = rows[hi]; data = [r for r in rows[hi + 1:] if len(r) == len(hdr)]
src = hdr.index("Source"); ex = hdr.index("Instructions Executed"); smp = hdr.index("Warp Stall Sampling (All Samples)")
ops = collections.Counter()
for r in data:
    op = r[src].strip().split()[0] if r[src].strip() else ""
    if op.startswith("@"): op = r[src].strip().split()[1]
    ops[op.split(".")[0]] += int(r[ex] or 0)
print("executed by opcode:", ", ".join(f"{k} {v}" for k, v in ops.most_common(40)))
last = max(i for i, r in enumerate(data) if "HGMMA" in r[src])
for r in data[last:last + 300]:
    s = r[src].strip()
    if re.search(r"STS|STSM|STG|UTMA|BAR|FENCE|SYNCS|SHFL|F2FP|ST\.|MEMBAR|UBLKCP|STAS", s):
        print(s[:90], "| exec", r[ex], "| samples", r[smp])
PY
cd $OUT && tar czf p.tgz p && rm -rf p
