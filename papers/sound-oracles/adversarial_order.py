#!/usr/bin/env python3
"""Evidence for misses.md, category 'inside R, beyond the correct spread': a correct
implementation of layer_norm's plan (two-pass, sum=any) that sums the row mean in an
adversarial but legitimate order (positives in descending order, then negatives) lands
as far from the reference as the one-pass-variance mutant numoracle does not flag on
main inputs (H-layer_norm-mut_naive_var: 1002 ulps on fp32 8x64 small seed 1, the
library's correct variants: 296).

Pure Python (fp32 rounding through struct). Inputs, reference and reachable sets come
from a certified golden bundle:
    numoracle golden --op layer_norm --dtype fp32 --shape 8x64 --family small --seed 1 \\
        --name ln_small --root /tmp/g
    cd /tmp/g/quick/LayerNormFwd/nchw/fp32/ln_small && python3 .../adversarial_order.py
Measured: natural order 216 ulps, adversarial order 1240 ulps from the reference, every
element inside the reachable sets in both cases."""
import struct, math
def rd(n, k): 
    b=open('ln_small.tensor%s.bin'%k,'rb').read(); return list(struct.unpack('<%df'%(len(b)//4), b))
def f(x): return struct.unpack('<f', struct.pack('<f', x))[0]
def ordn(x):
    i=struct.unpack('<i', struct.pack('<f', x))[0]
    return i if i>=0 else -(i & 0x7fffffff)
x=rd(0,0); w=rd(0,1); b=rd(0,2); ref=rd(0,3); lo=rd(0,'3.lo'); hi=rd(0,'3.hi')
N=64; M=len(x)//N; eps=f(1e-5)
def fsum(v):
    s=0.0
    for t in v: s=f(s+t)
    return s
def ln(row, order, onepass=False):
    xs=[row[i] for i in order]
    mean=f(fsum(xs)/N)
    if onepass:
        ex2=f(fsum([f(t*t) for t in row])/N); var=f(ex2-f(mean*mean))
    else:
        d=[f(t-mean) for t in row]; var=f(fsum([f(t*t) for t in d])/N)
    rstd=f(1.0/f(math.sqrt(f(var+eps))))
    return [f(f(f(f(row[j]-mean)*rstd)*w[j])+b[j]) for j in range(N)]
def adv(row):  # positives descending, then negatives: the largest partial sums
    idx=list(range(N)); pos=sorted([i for i in idx if row[i]>0], key=lambda i:-row[i]); neg=sorted([i for i in idx if row[i]<=0], key=lambda i:row[i])
    return pos+neg
for name, mk in [("natural order", lambda r: (list(range(N)), False)), ("adversarial order (positives first)", lambda r: (adv(r), False))]:
    mx=0; out=0
    for i in range(M):
        row=x[i*N:(i+1)*N]; o,op=mk(row)
        y=ln(row,o,op)
        for j in range(N):
            k=i*N+j; u=abs(ordn(y[j])-ordn(ref[k])); mx=max(mx,u)
            out += not (lo[k] <= y[j] <= hi[k])
    print("%-42s max ulps from the reference %6d, elements outside R %d" % (name, mx, out))
