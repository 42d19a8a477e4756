/*
 * app.c: a small C app on kiln. SwiGLU on 1M bf16 elements, then a check of
 * a few outputs on the host. Built two ways in CI:
 *   bazel run //examples:app
 *   make -C examples    (cc app.c $(pkg-config --cflags --libs kiln), after
 *                        bazel run //runtime:install -- PREFIX)
 * Without a GPU it prints kiln's status for that and exits 0.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime.h>
#include <kiln.h>

static uint16_t to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

static float from_bf16(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

int main(void)
{
    const int64_t n = 1 << 20;
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        kiln_status st = kiln_gated_fwd(KILN_DTYPE_BF16, KILN_ACT_SILU, n, (void *)0x1000, (void *)0x2000000,
                                        (void *)0x4000000, NULL);
        printf("no GPU here: kiln_gated_fwd says %s (%s)\n", kiln_status_string(st), kiln_last_error());
        return st == KILN_STATUS_NO_DEVICE || st == KILN_STATUS_CUDA_ERROR ? 0 : 1;
    }
    uint16_t *h = malloc((size_t)n * 2 * 2);
    for (int64_t i = 0; i < 2 * n; i++) h[i] = to_bf16((float)((i * 37 % 101) - 50) / 25.0f);
    void *gate, *up, *y;
    if (cudaMalloc(&gate, (size_t)n * 2) || cudaMalloc(&up, (size_t)n * 2) || cudaMalloc(&y, (size_t)n * 2)) return 1;
    cudaMemcpy(gate, h, (size_t)n * 2, cudaMemcpyHostToDevice);
    cudaMemcpy(up, h + n, (size_t)n * 2, cudaMemcpyHostToDevice);
    kiln_status st = kiln_gated_fwd(KILN_DTYPE_BF16, KILN_ACT_SILU, n, gate, up, y, NULL);
    if (st != KILN_STATUS_SUCCESS) {
        fprintf(stderr, "kiln_gated_fwd: %s: %s\n", kiln_status_string(st), kiln_last_error());
        return 1;
    }
    uint16_t out[8];
    if (cudaMemcpy(out, y, sizeof out, cudaMemcpyDeviceToHost) != cudaSuccess) return 1;
    double worst = 0;
    for (int i = 0; i < 8; i++) {
        const double g = from_bf16(h[i]), u = from_bf16(h[n + i]), ref = g / (1 + exp(-g)) * u;
        const double d = fabs(from_bf16(out[i]) - ref);
        if (d > worst) worst = d;
    }
    printf("swiglu on %lld bf16 elements with %s: max error of 8 outputs %.2e\n", (long long)n, kiln_last_variant(), worst);
    cudaFree(gate);
    cudaFree(up);
    cudaFree(y);
    free(h);
    return worst < 0.05 ? 0 : 1;
}
