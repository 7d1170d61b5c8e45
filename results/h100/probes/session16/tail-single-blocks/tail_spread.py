import itertools, statistics
def pieces(T, C, S):
    tail = T*S
    begin = lambda c: c*tail//C
    out = []  # (cluster, unit, k0, k1, t0)
    for c in range(C):
        b, e = begin(c), begin(c+1)
        # last piece first
        segs = []
        end = e
        t = 0
        while end > b:
            u = (end-1)//S
            us = u*S
            st = max(b, us)
            segs.append((u, st-us, end-us))
            end = st
        for (u, k0, k1) in segs:
            out.append((c, u, k0, k1, t)); t += k1-k0
    return out
def spread(T, C, S, unit_rc):
    P = pieces(T, C, S)
    # time at which unit u's slice k is read
    when = {}
    for c, u, k0, k1, t0 in P:
        for k in range(k0, k1): when[(u, k)] = t0 + (k-k0)
    rows = {}; cols = {}
    for u in range(T):
        r, cc = unit_rc[u]
        rows.setdefault(r, []).append(u); cols.setdefault(cc, []).append(u)
    def panel_spread(groups):
        vals = []
        for g in groups.values():
            if len(g) < 2: continue
            for k in range(S):
                ts = [when[(u, k)] for u in g]
                vals.append(max(ts)-min(ts))
        return statistics.mean(vals) if vals else 0
    return panel_spread(rows), panel_spread(cols)
# 8192^3 tf32, clusters of 2: tail units = last 34 of grouped order (8 cluster rows per group, m fastest)
S, C = 256, 66
units = [(m, n) for n in range(32) for m in range(8)]  # last group, m fastest
tail = units[-34:]
print("as now (m fastest):", spread(34, C, S, tail))
tail_n = sorted(tail, key=lambda x: (x[0], x[1]))  # row by row
print("n fastest:", spread(34, C, S, tail_n))
# snake in 2x2 blocks etc
import random
best = None
for trial in range(3000):
    perm = tail[:]; random.shuffle(perm)
    a, b = spread(34, C, S, perm)
    if best is None or a+b < best[0]: best = (a+b, a, b, perm)
print("random best:", best[:3])
