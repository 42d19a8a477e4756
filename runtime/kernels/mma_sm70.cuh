/*
 * mma_sm70.cuh: Volta's tensor-core instruction, mma.sync m8n8k4 with f16
 * inputs and f32 accumulators, and where its fragments sit.
 *
 * One instruction is four independent 8×8×4 products, one per quad-pair:
 * lanes 4q .. 4q+3 (low group) with 16+4q .. 16+4q+3 (high group), q = 0..3.
 * Within its quad-pair, with hi = lane >= 16 (PTX ISA, "Matrix Fragments for
 * mma.m8n8k4 with .f16 floating point type"; CUTLASS's SM70_8x4_Row and
 * SM70_8x8_32b layouts say the same):
 *   A .row:  a0..a3 at row (lane % 4) + 4·hi, cols 0..3
 *   B .col:  b0..b3 at rows 0..3, col (lane % 4) + 4·hi
 *   B .row:  b0..b3 at row lane % 4, cols 4·hi .. 4·hi + 3
 *   C/D f32: c_i at row (lane & 1) + (i & 2) + 4·hi, col (i & 4) + (lane & 2) + (i & 1)
 * Two f16 pack low, high into a register (a0 low in the first), so a lane
 * loads its four A or B values as one 8-byte word.
 *
 * The kernels use the instruction as a 16×16×4 warp tile: quad-pair q takes
 * the rows of half q & 1 and the columns of half q >> 1, and index m (0..7)
 * of a half h is the tile's 4h + m % 4 + 8·(m / 4) (m884_spread). So the low
 * groups hold tile rows 0..7, the high groups 8..15, and each half-warp's
 * 8-byte loads fall on 8 different rows of a tile swizzled by row % 8.
 * The functions below give, per lane, where its fragments sit in that tile;
 * kernels derive every fragment index from them.
 */
#ifndef KILN_KERNELS_MMA_SM70_CUH
#define KILN_KERNELS_MMA_SM70_CUH

#include <stdint.h>

namespace kiln {

/* d += a·b, f16 inputs, f32 accumulators: A .row and B .col (a lane's b0..b3
 * run down a column of B, i.e. along a row of Bᵀ) ... */
__device__ __forceinline__ void mma884_row_col(float (&d)[8], uint2 a, uint2 b)
{
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32 {%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9}, {%10,%11}, "
                 "{%0,%1,%2,%3,%4,%5,%6,%7};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
                 : "r"(a.x), "r"(a.y), "r"(b.x), "r"(b.y));
}

/* ... or A .row and B .row (b0..b3 run along a row of B). */
__device__ __forceinline__ void mma884_row_row(float (&d)[8], uint2 a, uint2 b)
{
    asm volatile("mma.sync.aligned.m8n8k4.row.row.f32.f16.f16.f32 {%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9}, {%10,%11}, "
                 "{%0,%1,%2,%3,%4,%5,%6,%7};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
                 : "r"(a.x), "r"(a.y), "r"(b.x), "r"(b.y));
}

/* Row (or column) of the 16-wide warp tile that index m of half h is. */
__device__ constexpr int m884_spread(int h, int m) { return 4 * h + (m & 3) + 8 * (m >> 2); }

/* A .row: the tile row whose k 0..3 lane's a0..a3 are. */
__device__ constexpr int m884_a_row(int lane) { return m884_spread((lane >> 2) & 1, (lane & 3) + 4 * (lane >> 4)); }

/* B .col: the tile column whose k 0..3 lane's b0..b3 are. */
__device__ constexpr int m884_b_col(int lane) { return m884_spread((lane >> 3) & 1, (lane & 3) + 4 * (lane >> 4)); }

/* B .row: the k row lane's b0..b3 are on, and the first of their 4 columns. */
__device__ constexpr int m884_b_row_k(int lane) { return lane & 3; }
__device__ constexpr int m884_b_row_col(int lane) { return m884_spread((lane >> 3) & 1, 4 * (lane >> 4)); }

/* C/D: the tile row and column of lane's c_i, i = 0..7. c_i and c_i+1 (i
 * even) are adjacent columns of one row. */
__device__ constexpr int m884_c_row(int lane, int i)
{
    return m884_spread((lane >> 2) & 1, (lane & 1) + (i & 2) + 4 * (lane >> 4));
}
__device__ constexpr int m884_c_col(int lane, int i)
{
    return m884_spread((lane >> 3) & 1, (i & 4) + (lane & 2) + (i & 1));
}

/* A lane's C values lie on two rows: c_i on the first (0) or second (1). */
__device__ constexpr int m884_c_lane_row(int i) { return (i >> 1) & 1; }

/* The lanes holding the rest of a lane's C rows: lane ^ 2, lane ^ 8 and
 * lane ^ 10 (m884_c_row ignores lane bits 1 and 3); xor-shuffles by these
 * two masks reduce over a row. */
__device__ constexpr int m884_c_row_peer(int j) { return j == 0 ? 2 : 8; }

} /* namespace kiln */

#endif /* KILN_KERNELS_MMA_SM70_CUH */
