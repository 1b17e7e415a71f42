/*
 * Test driver for kernel objects, built for the host or for aarch64 (run under qemu-user).
 *
 * usage: driver LIB JOB OUT
 *   LIB  a shared library linked from one kernel object (its `ekb_parallel_for` import is
 *        resolved against this executable, which exports it: link with -rdynamic)
 *   JOB  little-endian: u32 magic "EKBJ", u32 chunks, u32 nbufs, then per buffer u64 bytes and
 *        the bytes; u32 nsteps, then per step u32 name length, the name (an `ekb_k_*` symbol),
 *        u32 nargs and nargs u32 buffer indices
 *   OUT  every buffer's bytes after the plan ran, in order
 *
 * `ekb_parallel_for` runs the chunks of [0, n) in reverse order on the calling thread: the
 * launch contract promises no order, so kernels must not depend on one.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*chunk_fn)(void *ctx, int64_t begin, int64_t end);
typedef void (*kernel_fn)(void *const *args);

static int64_t chunks = 1;

void ekb_parallel_for(chunk_fn fn, void *ctx, int64_t n) {
    if (n <= 0) return;
    int64_t c = chunks < n ? chunks : n;
    for (int64_t i = c - 1; i >= 0; i--) fn(ctx, n * i / c, n * (i + 1) / c);
}

static void die(const char *what, const char *detail) {
    fprintf(stderr, "driver: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    exit(2);
}

static void read_exact(FILE *f, void *p, size_t n) {
    if (n && fread(p, 1, n, f) != n) die("truncated job file", NULL);
}

static uint32_t read_u32(FILE *f) {
    uint32_t v;
    read_exact(f, &v, 4);
    return v;
}

int main(int argc, char **argv) {
    if (argc != 4) die("usage: driver LIB JOB OUT", NULL);
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) die("dlopen", dlerror());
    FILE *job = fopen(argv[2], "rb");
    if (!job) die("cannot open the job file", argv[2]);
    if (read_u32(job) != 0x4a424b45u) die("bad job magic", NULL);
    chunks = read_u32(job);
    uint32_t nbufs = read_u32(job);
    void **bufs = calloc(nbufs, sizeof *bufs);
    uint64_t *sizes = calloc(nbufs, sizeof *sizes);
    for (uint32_t i = 0; i < nbufs; i++) {
        read_exact(job, &sizes[i], 8);
        bufs[i] = aligned_alloc(64, (sizes[i] + 63) / 64 * 64 + 64);
        if (!bufs[i]) die("out of memory", NULL);
        read_exact(job, bufs[i], sizes[i]);
    }
    uint32_t nsteps = read_u32(job);
    for (uint32_t s = 0; s < nsteps; s++) {
        char name[256];
        uint32_t len = read_u32(job);
        if (len >= sizeof name) die("symbol name too long", NULL);
        read_exact(job, name, len);
        name[len] = 0;
        kernel_fn k = (kernel_fn)dlsym(lib, name);
        if (!k) die("missing kernel symbol", name);
        uint32_t nargs = read_u32(job);
        void **args = calloc(nargs + 1, sizeof *args);
        for (uint32_t a = 0; a < nargs; a++) {
            uint32_t idx = read_u32(job);
            if (idx >= nbufs) die("buffer index out of range", NULL);
            args[a] = bufs[idx];
        }
        k(args);
        free(args);
    }
    fclose(job);
    FILE *out = fopen(argv[3], "wb");
    if (!out) die("cannot create the output file", argv[3]);
    for (uint32_t i = 0; i < nbufs; i++)
        if (fwrite(bufs[i], 1, sizes[i], out) != sizes[i]) die("short write", NULL);
    return fclose(out) == 0 ? 0 : 2;
}
