#!/bin/bash
# Session 43, call 4: which cuBLAS kernels run the shapes where call 2's scans trail most.
export PYTHONPATH=$PWD
mkdir -p $OUT/c4
timeout 200 python scripts/cublas_kernels.py \
573x4096x11008,545x4096x14336,542x8192x28672,1735x2904x2672,2147x1880x2536,2276x2288x1872,1901x2408x2512,\
2970x1544x3040,963x5232x2744,146x1512x2920,157x3096x5608,155x7328x7848,89x3656x4296,201x1192x6712,\
282x28672x8192,2997x4096x4096,874x4096x4096 2>&1 | grep -v Warn | tee $OUT/c4/cublas_kernels.txt
