"""Which cuBLAS kernel torch's F.linear runs per shape, and its device time (torch.profiler): the tile cuBLAS picks
(nvjet_sm90_tst_<M>x<N>_<K>x<stages>_<cluster>...) says how it fits the SMs.

    python3 scripts/cublas_kernels.py 777x4096x11008,1536x1536x1536
"""
import sys, torch
from torch.profiler import profile, ProfilerActivity
shapes=[tuple(map(int,s.split('x'))) for s in sys.argv[1].split(',')]
for M,N,K in shapes:
    a=torch.randn(M,K,device='cuda',dtype=torch.bfloat16); w=torch.randn(N,K,device='cuda',dtype=torch.bfloat16)
    for _ in range(3): torch.nn.functional.linear(a,w)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        for _ in range(5): torch.nn.functional.linear(a,w)
        torch.cuda.synchronize()
    ev=[e for e in p.events() if e.device_type.name=='CUDA']
    names={}
    for e in ev: names.setdefault(e.name,[]).append(e.device_time if hasattr(e,'device_time') else e.cuda_time)
    print(f"{M}x{N}x{K}:", {k[:160]: round(sum(v)/len(v),1) for k,v in names.items()})
