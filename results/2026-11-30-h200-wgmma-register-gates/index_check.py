#!/usr/bin/env python3
"""The branch kernel's index algebra (recurrence_wgmma_fwd.cu at hidden 1024), emulated on the CPU: every
gate row once; each thread's handed and taken partial sums meet the same (gate, unit, sample) from
the other warpgroup; xs reads and copies; each (unit, sample) of h_t stored once at the ring's
offset. Prints "index algebra ok" or fails an assertion."""
# Emulate the index algebra of the branch's wgmma kernel (HID=1024, KC=128, BATCH=32, UNITS=32).
HID, KC, BATCH, UNITS, REG_ROWS = 1024, 128, 32, 32, 64
H_LBO, H_SBO = 128, (KC//8)*128
PART_SUMS, XP = 16, UNITS + 8
def row_gate(n): return 2*(n//REG_ROWS) + (n % 16)//8
def row_unit(n): return 8*((n % REG_ROWS)//16) + n % 8
# every (gate, unit) appears exactly once among block rows
pairs = sorted((row_gate(n), row_unit(n)) for n in range(128))
assert pairs == sorted((g,u) for g in range(4) for u in range(32)), "rows"
def h_offset(m, k): return (k//8)*H_LBO + (m//8)*H_SBO + (m % 8)*16 + (k % 8)*2
for GATES in (4, 3):
  for blk in (0, 5):
    # accumulators: warpgroup g thread (wq, lane): d[4j+2h+x] row 16wq+r0+8h col 8j+2q+x (rows 0-63),
    # e likewise rows 64+..; value = partial of (gate,unit,sample) from warpgroup g
    red = {}
    acc = {}
    for g in range(2):
      for wq in range(4):
        for lane in range(32):
          r0, q = lane // 4, lane % 4
          for arr, base in (("d", 0), ("e", 64)):
            for j in range(4):
              for h in range(2):
                for x in range(2):
                  n = base + 16*wq + r0 + 8*h
                  gate, unit, m = row_gate(n), row_unit(n), 8*j + 2*q + x
                  acc[(g, wq, lane, arr, 4*j+2*h+x)] = ("p", g, gate, unit, m)
    # hand_over<G>: writes for j = 2(1-G)+jj, gt, x: red[((1-G)*16 + 8jj + 2gt + x)*128 + part] = acc(gt)
    for g in range(2):
      for wq in range(4):
        for lane in range(32):
          part = wq*32 + lane
          for jj in range(2):
            for gt in range(GATES):
              for x in range(2):
                j = 2*(1-g) + jj; at = 4*j + 2*(gt % 2) + x
                arr = "d" if gt < 2 else "e"
                idx = ((1-g)*PART_SUMS + 8*jj + 2*gt + x)*128 + part
                assert idx not in red; red[idx] = acc[(g, wq, lane, arr, at)]
    # take_over<G>: for s, gt: own acc + red[(G*16 + 8*(s/2) + 2gt + s%2)*128 + part]
    stored = {}
    for g in range(2):
      for wq in range(4):
        for lane in range(32):
          r0, q = lane // 4, lane % 4
          u = 8*wq + r0; part = wq*32 + lane
          for s in range(4):
            m = 8*(2*g + s//2) + 2*q + s % 2
            for gt in range(GATES):
              at = 4*(2*g + s//2) + 2*(gt % 2) + s % 2
              arr = "d" if gt < 2 else "e"
              own = acc[(g, wq, lane, arr, at)]
              other = red[(g*PART_SUMS + 8*(s//2) + 2*gt + s % 2)*128 + part]
              assert own[2:] == (gt, u, m) and other[2:] == (gt, u, m) and own[1] != other[1], (own, other, gt, u, m)
            # xs read index: xq = (16g + 2q)*XP + u; + (gt*BATCH + 8*(s/2) + s%2)*XP  == (gt*BATCH+m)*XP+u
            for gt in range(GATES):
              assert (16*g + 2*q)*XP + u + (gt*BATCH + 8*(s//2) + s % 2)*XP == (gt*BATCH + m)*XP + u
          # store_h: even lanes store s<2, odd s>=2; pair (k0, k0+1)
          k = UNITS*blk + u; k0 = k & ~1; even = (r0 & 1) == 0
          oq = (k0//KC)*(BATCH*KC*2) + ((k0 % KC)//8)*H_LBO + (k0 % 8)*2 + 2*g*H_SBO + 2*q*16
          for s in range(4):
            if even != (s < 2): continue
            m = 8*(2*g + s//2) + 2*q + s % 2
            off = oq + (s//2)*H_SBO + (s % 2)*16
            assert off == (k0//KC)*(BATCH*KC*2) + h_offset(m, k0 % KC), "exchange offset"
            for unit_k in (k0, k0+1):
              key = (unit_k, m); assert key not in stored; stored[key] = 1
            # partner lane has unit k^1: lane ^ 4 -> r0 ^ 1
            assert ((lane ^ 4)//4) == (r0 ^ 1)
    assert len(stored) == 32*32, len(stored)
    # xs copy: tid -> piece, sample, gate (+2)
    cov = set()
    for tid in range(256):
      piece, xm, xg0 = tid % 4, (tid//4) % 32, tid // 128
      for gate in (xg0, xg0+2):
        if gate < GATES:
          for e in range(8): 
            key = (gate, xm, 8*piece + e); assert key not in cov; cov.add(key)
    assert len(cov) == GATES*32*32
print("index algebra ok")
