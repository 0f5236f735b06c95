// LD_PRELOAD shim: logs every cuTensorMapEncodeTiled call (the TMA descriptors a library builds on the host), so the
// descriptors cuBLAS builds can be compared with ours. Libraries reach the driver through dlsym / cuGetProcAddress,
// so both are wrapped: a request for cuTensorMapEncodeTiled gets the logging wrapper. Output: $TMAP_LOG (stderr if
// unset), one line per call. Build: gcc -shared -fPIC -O2 -o tmap_log.so tmap_log.c -ldl
// Limits: lookups through dlvsym or a direct link to libcuda are not seen; callers passing RTLD_NEXT to dlsym get
// the symbol after this shim's caller's, not after theirs; only x86_64 glibc's dlsym versions are tried.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef CUresult (*encode_fn)(void *, int, uint32_t, void *, const uint64_t *, const uint64_t *, const uint32_t *,
                              const uint32_t *, int, int, int, int);
typedef CUresult (*gpa_fn)(const char *, void **, int, uint64_t, void *);
typedef CUresult (*gpa_old_fn)(const char *, void **, int, uint64_t);
typedef void *(*dlsym_fn)(void *, const char *);

static encode_fn real_encode;
static gpa_fn real_gpa_v2;
static gpa_old_fn real_gpa;
static dlsym_fn real_dlsym;
static FILE *out;

static FILE *log_file(void) {
    if (!out) {
        const char *p = getenv("TMAP_LOG");
        out = p ? fopen(p, "a") : stderr;
        if (!out) out = stderr;
    }
    return out;
}

static CUresult logged_encode(void *map, int dtype, uint32_t rank, void *addr, const uint64_t *dims,
                              const uint64_t *strides, const uint32_t *box, const uint32_t *estr, int interleave,
                              int swizzle, int l2promo, int oob) {
    FILE *f = log_file();
    fprintf(f, "encode dtype=%d rank=%u addr=%p addr_mod128=%lu dims=", dtype, rank, addr,
            (unsigned long)((uintptr_t)addr % 128));
    for (uint32_t i = 0; i < rank; i++) fprintf(f, "%s%lu", i ? "x" : "", (unsigned long)dims[i]);
    fprintf(f, " strides=");
    for (uint32_t i = 0; i + 1 < rank; i++) fprintf(f, "%s%lu", i ? "x" : "", (unsigned long)strides[i]);
    fprintf(f, " box=");
    for (uint32_t i = 0; i < rank; i++) fprintf(f, "%s%u", i ? "x" : "", box[i]);
    fprintf(f, " estr=");
    for (uint32_t i = 0; i < rank; i++) fprintf(f, "%s%u", i ? "x" : "", estr[i]);
    fprintf(f, " interleave=%d swizzle=%d l2promo=%d oob=%d\n", interleave, swizzle, l2promo, oob);
    fflush(f);
    return real_encode(map, dtype, rank, addr, dims, strides, box, estr, interleave, swizzle, l2promo, oob);
}

static void *swap_in(const char *symbol, void *pfn) {
    if (pfn && symbol && strcmp(symbol, "cuTensorMapEncodeTiled") == 0) {
        real_encode = (encode_fn)pfn;
        return (void *)logged_encode;
    }
    return pfn;
}

static CUresult wrapped_gpa_v2(const char *symbol, void **pfn, int version, uint64_t flags, void *status);
static CUresult wrapped_gpa(const char *symbol, void **pfn, int version, uint64_t flags);

// cuGetProcAddress can hand out cuGetProcAddress itself (the v2 form from CUDA 12 on): wrap that too.
static void *swap_gpa(const char *symbol, void *pfn, int version) {
    if (!pfn || !symbol || strncmp(symbol, "cuGetProcAddress", 16) != 0) return swap_in(symbol, pfn);
    if (strcmp(symbol, "cuGetProcAddress_v2") == 0 || version >= 12000) {
        real_gpa_v2 = (gpa_fn)pfn;
        return (void *)wrapped_gpa_v2;
    }
    real_gpa = (gpa_old_fn)pfn;
    return (void *)wrapped_gpa;
}

static CUresult wrapped_gpa_v2(const char *symbol, void **pfn, int version, uint64_t flags, void *status) {
    CUresult r = real_gpa_v2(symbol, pfn, version, flags, status);
    if (r == 0 && pfn) *pfn = swap_gpa(symbol, *pfn, version);
    return r;
}

static CUresult wrapped_gpa(const char *symbol, void **pfn, int version, uint64_t flags) {
    CUresult r = real_gpa(symbol, pfn, version, flags);
    if (r == 0 && pfn) *pfn = swap_gpa(symbol, *pfn, version);
    return r;
}

void *dlsym(void *handle, const char *symbol) {
    if (!real_dlsym) real_dlsym = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
    if (!real_dlsym) real_dlsym = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
    void *p = real_dlsym(handle, symbol);
    if (!p || !symbol) return p;
    if (strcmp(symbol, "cuGetProcAddress_v2") == 0) { real_gpa_v2 = (gpa_fn)p; return (void *)wrapped_gpa_v2; }
    if (strcmp(symbol, "cuGetProcAddress") == 0) { real_gpa = (gpa_old_fn)p; return (void *)wrapped_gpa; }
    return swap_in(symbol, p);
}
