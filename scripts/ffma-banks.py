#!/usr/bin/env python3
"""Register-bank model of the FFMA main loops in SASS, read offline (no GPU).

  scripts/ffma-banks.py FILE.sass [--kernel SUBSTRING]
  (FILE.sass from `cuobjdump -sass object.o`; cuobjdump and nvdisasm install from PyPI as
  nvidia-cuda-cuobjdump / nvidia-cuda-nvdisasm where the toolkit lacks them)

For each kernel, the loop with the most FFMAs (a backward branch and its target) is read as
an FFMA pipe would: two register banks (register number mod 2), one read port each, and a
reuse cache entry per (operand slot, bank) holding the register last read there with
`.reuse`. An FFMA whose register-file reads fall twice on one bank costs an extra cycle
(Huerta et al., "Analyzing Modern NVIDIA GPU cores", 2025, for Ampere; assumed for Hopper).
Printed: instructions, FFMAs, how many read 1/2/3 sources from the file, the extra cycles,
and FFMA / (instructions + extra cycles), the share of issue slots left to FFMA work.
"""
import argparse
import collections
import re
import subprocess
import sys

INSTR = re.compile(r'/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;')
PRED = re.compile(r'^@!?U?P\w+\s+')
REG = re.compile(r'-?\|?R(\d+)(\.reuse)?')


def demangle(name):
    try:
        return subprocess.run(['c++filt', name], capture_output=True, text=True).stdout.strip() or name
    except OSError:
        return name


def kernels(text):
    for part in re.split(r'\n\s*Function : ', text)[1:]:
        name, body = part.split('\n', 1)
        rows = [(int(m.group(1), 16), m.group(2)) for m in map(INSTR.search, body.splitlines()) if m]
        labels = {}
        lines = body.splitlines()
        for i, line in enumerate(lines):
            m = re.match(r'\s*\.(L_x_\d+):', line)
            if m:
                for later in lines[i + 1:]:
                    a = INSTR.search(later)
                    if a:
                        labels[m.group(1)] = int(a.group(1), 16)
                        break
        yield name.strip(), rows, labels


def main_loop(rows, labels):
    best = None
    for addr, ins in rows:
        if 'BRA' not in ins:
            continue
        target = None
        lab = re.search(r'\.(L_x_\d+)', ins)
        hexa = re.search(r'0x([0-9a-f]+)', ins)
        if lab and lab.group(1) in labels:
            target = labels[lab.group(1)]
        elif hexa:
            target = int(hexa.group(1), 16)
        if target is None or target >= addr:
            continue
        body = [i for a, i in rows if target <= a <= addr]
        n = sum(1 for i in body if PRED.sub('', i).startswith('FFMA'))
        if best is None or n > best[0]:
            best = (n, body)
    return best[1] if best else []


def model(body):
    cache, reads, extra = {}, collections.Counter(), 0
    ffma = 0
    for ins in body:
        ins = PRED.sub('', ins)
        if not ins.startswith('FFMA'):
            continue
        ffma += 1
        operands = [o.strip() for o in ins.split(None, 1)[1].split(',')]
        from_file = []
        for slot, src in enumerate(operands[1:]):
            m = REG.match(src)
            if not m:
                continue
            r = int(m.group(1))
            hit = cache.get((slot, r % 2)) == r
            if not hit:
                from_file.append(r)
            if m.group(2):
                cache[(slot, r % 2)] = r
            elif not hit:
                cache.pop((slot, r % 2), None)
        banks = collections.Counter(r % 2 for r in set(from_file))
        extra += max(banks.values(), default=1) - 1
        reads[len(from_file)] += 1
        d = REG.match(operands[0])
        if d:  # a write invalidates a cached copy
            for key in [k for k, v in cache.items() if v == int(d.group(1))]:
                del cache[key]
    return ffma, reads, extra


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('sass')
    p.add_argument('--kernel', default='', help='only kernels whose demangled name contains this')
    a = p.parse_args()
    text = open(a.sass).read()
    for name, rows, labels in kernels(text):
        pretty = demangle(name)
        if a.kernel not in pretty:
            continue
        body = main_loop(rows, labels)
        ffma, reads, extra = model(body)
        if ffma == 0:
            continue
        print(re.sub(r'\w+::|\(anonymous namespace\)::', '', pretty)[:240])
        print(f'  loop {len(body)} instructions, {ffma} FFMA; file reads per FFMA '
              + ', '.join(f'{k}: {v}' for k, v in sorted(reads.items()))
              + f'; extra read cycles {extra}; FFMA share of issue slots {ffma / (len(body) + extra):.3f}')


if __name__ == '__main__':
    sys.exit(main())
