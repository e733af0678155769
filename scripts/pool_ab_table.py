#!/usr/bin/env python3
"""The op under three memory/gradient settings against PyTorch, per shape (stdlib only).

Usage: scripts/pool_ab_table.py DIR
DIR holds bench_grid --json files named op_TAG_MODE_SHAPE.json, TAG one of release
(--release-memory), keep (the default: freed memory kept in the pool) and sink (--sink), a
trailing 2 for a second pass, and torch_*.json from scripts/torch_reference.py --grid --only
(results/2026-11-23-h100-op-pool/go-ov1.sh made them). Prints us/example per setting, the mean
of the passes, its ratio to PyTorch, and per precision the geo-mean and worst ratio.
"""
import json,glob,collections,sys,math
d=sys.argv[1]
op=collections.defaultdict(dict)  # (shape,prec,phase)->{tag:[vals]}
for f in glob.glob(d+'/op_*.json'):
    tag=f.split('/')[-1].split('_')[1].rstrip('2')
    for r in json.load(open(f))['grid']:
        prec=r['impl'].split()[0].replace('op-','')
        key=(r['mode'],r['layers'],r['batch'],r['seq'],r['hidden'])
        for ph in ('train','forward'):
            op[(key,prec,ph)].setdefault(tag,[]).append(r[ph+'_us_per_example'])
tmap={'torch-fp32':'fp32','torch-tf32':'tf32','torch-amp-bf16':'bf16'}
for f in glob.glob(d+'/torch_*.json'):
    for r in json.load(open(f))['grid']:
        if 'error' in r: continue
        key=(r['mode'],r['layers'],r['batch'],r['seq'],r['hidden'])
        for ph in ('train','forward'):
            op[(key,tmap[r['impl']],ph)].setdefault('torch',[]).append(r[ph+'_us_per_example'])
tags=['release','keep','sink','torch']
gm=collections.defaultdict(list)
for ph in ('train','forward'):
  print(f"\n{ph}: us/example, mean of 2 passes; ratio to torch")
  print("| shape | prec | "+" | ".join(tags)+" | release/t | keep/t | sink/t |")
  for k in sorted(op):
    if k[2]!=ph: continue
    v={t:sum(op[k][t])/len(op[k][t]) for t in tags if t in op[k]}
    if 'torch' not in v: continue
    rs=[v[t]/v['torch'] for t in tags[:3]]
    for t,r in zip(tags[:3],rs): gm[(ph,k[1],t)].append(r)
    print(f"| {k[0]} | {k[1]} | "+" | ".join(f"{v.get(t,float('nan')):.1f}" for t in tags)+" | "+" | ".join(f"{r:.2f}" for r in rs)+" |")
for k in sorted(gm):
    print(k, round(math.exp(sum(map(math.log,gm[k]))/len(gm[k])),3), 'worst',round(max(gm[k]),2))
