#!/usr/bin/env bash
# glibc's memcpy on this machine: GB/s for 4 KiB, 16 KiB and 64 KiB copies
# at a few source/destination offsets, with glibc's defaults and with
# `rep movsb` off (the setting h2sim starts itself with on AMD processors
# when glibc is older than 2.40: h2sim-cli/src/limits.rs). Needs a C
# compiler (cc). About 10 s, on cpu 0.
set -euo pipefail

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

cat >"$dir/copies.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(void) {
    char *src = aligned_alloc(4096, 1 << 20), *dst = aligned_alloc(4096, 1 << 20);
    memset(src, 1, 1 << 20);
    memset(dst, 2, 1 << 20);
    const size_t sizes[] = {4096, 16384, 65536};
    const int offsets[][2] = {{0, 0}, {5, 0}, {0, 5}, {5, 5}};
    for (int s = 0; s < 3; s++) {
        for (int o = 0; o < 4; o++) {
            size_t n = sizes[s];
            long rounds = (200L << 20) / n;
            double start = now();
            for (long i = 0; i < rounds; i++) {
                memcpy(dst + offsets[o][1], src + offsets[o][0], n);
                __asm__ volatile("" : : "r"(dst) : "memory");
            }
            double took = now() - start;
            printf("%6zu octets, source +%d, destination +%d: %6.1f GB/s\n", n,
                   offsets[o][0], offsets[o][1], rounds * n / took / 1e9);
        }
    }
    return 0;
}
C
cc -O2 -o "$dir/copies" "$dir/copies.c"

grep -m1 "model name" /proc/cpuinfo
ldd --version | head -1
echo "--- glibc's defaults"
env -u GLIBC_TUNABLES taskset -c 0 "$dir/copies"
echo "--- rep movsb off (glibc.cpu.x86_rep_movsb_threshold=1099511627776)"
GLIBC_TUNABLES=glibc.cpu.x86_rep_movsb_threshold=1099511627776 taskset -c 0 "$dir/copies"
