"""Session 39: relative error of fp32 and 16-bit outputs at long K, plan vs NARROW, the split tile and MEDIUM."""
import torch, warpgemm
from warpgemm.testing import rand, matmul_reference, rel_error
from warpgemm.heuristics import NARROW, MEDIUM
from warpgemm.few_tiles_split import SPLIT_TILE
g = torch.Generator(device="cuda").manual_seed(41)
for M,N,K in [(65,700,12289),(104,2832,7816),(65,700,12288),(128,4096,14336)]:
    for dt in (torch.float16, torch.bfloat16):
        a, w = rand(M, K, g=g, dtype=dt), rand(N, K, g=g, dtype=dt)
        ref = matmul_reference(a, w.T, None)
        row=[]
        for cfg in (None, NARROW, SPLIT_TILE, MEDIUM):
            for od in (torch.float32, dt):
                out = torch.full((M,N), float('nan'), dtype=od, device='cuda')
                try:
                    warpgemm.matmul(a, w.T, out=out, config=cfg)
                except ValueError:
                    row.append(f"{cfg.name} {od} invalid"); continue
                row.append(f"{cfg.name if cfg else 'plan'} {str(od)[6:]} {rel_error(out, ref):.3e}")
        print(M,N,K,dt,' | '.join(row), 'floor', 1e-6*max(1,(K/64)**0.5))
