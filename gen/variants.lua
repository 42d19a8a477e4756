-- variants.lua: the variant space of kiln, declared once.
--
-- Every kernel kiln ships is one point of family × op × shape key × activation
-- × dtype × arch that the family's `exists` rule admits. The generator walks the
-- axes in the order written here, so the variant list, the generated sources and
-- the selection table are deterministic. Families add their axes and traits
-- here and nowhere else; the runtime and the build read what gen derives.
--
-- The build compiles a family's variants in groups, one translation unit and
-- one cached action per group: the variants of one arch that agree on the
-- family's `group_by` axes. Small kernels (elementwise, norm, softmax) group by
-- op, so a group's header parsing is paid once for 15 to 33 of them; the
-- large ones (attention, linear) by op and dtype, to keep each action short.

local space = {}

-- Archs a variant can be tuned for. `cc` is the compute capability it needs.
space.archs = {
  { name = "sm_70", cc = 70 },
  { name = "sm_75", cc = 75 },
  { name = "sm_80", cc = 80 },
  { name = "sm_86", cc = 86 },
  { name = "sm_89", cc = 89 },
  { name = "sm_90", cc = 90 },
  -- Hopper's arch-specific instructions (wgmma): SASS for sm_90 alone, no
  -- PTX. Only families with a path for it list it; selection prefers it to
  -- sm_90 code on an sm_90 GPU.
  { name = "sm_90a", cc = 90, specific = true },
}

-- Element types. `min_cc`: the first arch with native arithmetic for it.
space.dtypes = {
  { name = "f32", enum = "KILN_DTYPE_F32", ctype = "float", bytes = 4, min_cc = 70 },
  { name = "f16", enum = "KILN_DTYPE_F16", ctype = "__half", bytes = 2, min_cc = 70 },
  { name = "bf16", enum = "KILN_DTYPE_BF16", ctype = "__nv_bfloat16", bytes = 2, min_cc = 80 },
  -- FP8, for inputs of the families that list them (linear): stored values
  -- with f32 scales beside them, no arithmetic of their own.
  { name = "e4m3", enum = "KILN_DTYPE_E4M3", ctype = "__nv_fp8_e4m3", bytes = 1, min_cc = 89, fp8 = true },
  { name = "e5m2", enum = "KILN_DTYPE_E5M2", ctype = "__nv_fp8_e5m2", bytes = 1, min_cc = 89, fp8 = true },
}

-- The dtypes the row-wise and elementwise families compute in.
local float_dtypes = { "f32", "f16", "bf16" }

space.acts = {
  { name = "none", enum = "KILN_ACT_NONE" },
  { name = "relu", enum = "KILN_ACT_RELU" },
  { name = "gelu_tanh", enum = "KILN_ACT_GELU_TANH" },
  { name = "gelu_erf", enum = "KILN_ACT_GELU_ERF" },
  { name = "silu", enum = "KILN_ACT_SILU" },
}

local function all(list)
  local names = {}
  for i, x in ipairs(list) do names[i] = x.name end
  return names
end

-- The archs whose code runs on every later GPU (all but the arch-specific).
local function portable(archs)
  local names = {}
  for _, x in ipairs(archs) do
    if not x.specific then names[#names + 1] = x.name end
  end
  return names
end

-- Row sizes the row-wise families (norm, softmax) compile as constants; 0 is
-- the generic variant for every other size.
local row_shapes = { 512, 768, 1024, 2048, 2560, 4096, 5120, 8192, 12288, 16384, 0 }

-- A row is split into 16-byte packs, held in registers from load to store,
-- at most `max_elems` elements a thread. Forward kinds give a row of up to
-- 256 packs one warp (4 rows a 128-thread block), a longer one a block sized
-- for 4 packs a thread. `grouped` (backward) sizes the row's thread group for
-- `max_elems` and packs groups into blocks of at least 256 threads.
local function row_traits(v, max_elems, grouped)
  local vec = 16 // v.dtype.bytes
  if v.shape == 0 then
    return { vec = vec, packs = 0, threads = 256, rows_per_block = 1, row_threads = 256,
             packs_per_thread = 0, smem = 0 }
  end
  assert(v.shape % vec == 0, "hidden sizes are multiples of a pack")
  local packs = v.shape // vec
  local max_ppt = max_elems // vec
  local row_threads
  if grouped then
    row_threads = math.max(32, ((packs + max_ppt - 1) // max_ppt + 31) // 32 * 32)
  elseif packs <= 256 then
    row_threads = 32
  else
    row_threads = ((packs // 4 + 31) // 32) * 32
  end
  assert(row_threads <= 1024, "a row fits one block")
  local rows_per_block = grouped and math.max(1, 256 // row_threads) or (row_threads == 32 and 4 or 1)
  local ppt = (packs + row_threads - 1) // row_threads
  assert(ppt * vec <= max_elems, "register budget")
  return { vec = vec, packs = packs, threads = row_threads * rows_per_block, rows_per_block = rows_per_block,
           row_threads = row_threads, packs_per_thread = ppt, smem = 0 }
end

space.families = {
  {
    name = "elementwise",
    template = "templates/elementwise.cu.tmpl",
    group_by = { "op" },
    -- y = act(x·scale + bias) and y = act(gate)·up, with their backward passes.
    ops = {
      { name = "elementwise_fwd", enum = "KILN_OP_ELEMENTWISE_FWD" },
      { name = "elementwise_bwd", enum = "KILN_OP_ELEMENTWISE_BWD" },
      { name = "gated_fwd", enum = "KILN_OP_GATED_FWD" },
      { name = "gated_bwd", enum = "KILN_OP_GATED_BWD" },
    },
    shapes = { 0 },
    acts = all(space.acts),
    dtypes = float_dtypes,
    archs = portable(space.archs),
    exists = function(v)
      return v.arch.cc >= v.dtype.min_cc
    end,
    -- Memory-bound: 16-byte accesses, several in flight per thread.
    -- 256 threads × 4 vectors keeps 64 B per tensor in flight per thread,
    -- which an H100 needs to approach its copy bandwidth (docs/elementwise.md).
    traits = function(v)
      return {
        threads = 256,
        vec = 16 // v.dtype.bytes,
        unroll = 4,
        -- dbias tiles: 32 lanes over columns × 8 rows of threads, 8 rows
        -- each: one 64-row chunk (KILN_EW_DBIAS_CHUNK_ROWS) per pass.
        dbias_tile_rows = 8,
        dbias_rows_per_thread = 8,
        smem = 0,
      }
    end,
  },
  {
    name = "norm",
    template = "templates/norm.cu.tmpl",
    group_by = { "op" },
    -- LayerNorm and RMSNorm over the last dimension: the forward with the
    -- fused residual add (s = x + residual, s written out) and saved
    -- statistics, the same with an FP8 e4m3 output, and the backward.
    ops = {
      { name = "layernorm_fwd", enum = "KILN_OP_LAYERNORM_FWD" },
      { name = "rmsnorm_fwd", enum = "KILN_OP_RMSNORM_FWD" },
      { name = "layernorm_fwd_fp8", enum = "KILN_OP_LAYERNORM_FWD_FP8", min_cc = 89 },
      { name = "rmsnorm_fwd_fp8", enum = "KILN_OP_RMSNORM_FWD_FP8", min_cc = 89 },
      { name = "layernorm_bwd", enum = "KILN_OP_LAYERNORM_BWD" },
      { name = "rmsnorm_bwd", enum = "KILN_OP_RMSNORM_BWD" },
    },
    -- Hidden sizes held whole on chip as compile-time constants; 0 is the
    -- generic variant for every other size.
    shapes = row_shapes,
    shape_prefix = "h",
    acts = { "none" },
    dtypes = float_dtypes,
    archs = portable(space.archs),
    exists = function(v)
      return v.arch.cc >= v.dtype.min_cc and v.arch.cc >= (v.op.min_cc or 0)
    end,
    traits = function(v)
      local bwd = v.op.name:find("_bwd") ~= nil
      -- Backward: dx, dgamma and dbeta partials per element on top of s and
      -- dy, so at most 16 elements a thread; several warps per row when
      -- needed, rows packed into 256-thread blocks.
      local t = row_traits(v, bwd and 16 or 64, bwd)
      -- Forward, a row over several warps (a block a row): registers capped
      -- near the row's elements a thread + 48, as a floor on rows an SM
      -- (64K registers / (that · threads)). Uncapped, LayerNorm at hidden
      -- 8192 took 88 to 96 and fit two rows an SM: 2.8 TB/s; capped at 80,
      -- three rows: 3.2 TB/s (H200, 2026-11-23; at 64 it spilled: 2.5 TB/s).
      -- A warp a row leaves many rows an SM uncapped. No floor (nil) is not
      -- a floor of 1: `__launch_bounds__(128, 1)` gave RMSNorm at hidden 768
      -- 56 registers instead of 48, 2.7 TB/s instead of 3.1.
      if not bwd and v.shape ~= 0 and t.row_threads > 32 then
        local floor = 65536 // ((t.packs_per_thread * t.vec + 48) * t.threads)
        if floor > 1 then t.min_blocks = floor end
      end
      return t
    end,
  },
  {
    name = "softmax",
    template = "templates/softmax.cu.tmpl",
    group_by = { "op" },
    -- y = softmax(scale·x) or log-softmax over the last dimension.
    ops = {
      { name = "softmax_fwd", enum = "KILN_OP_SOFTMAX_FWD" },
    },
    shapes = row_shapes,
    shape_prefix = "h",
    acts = { "none" },
    dtypes = float_dtypes,
    archs = portable(space.archs),
    exists = function(v)
      return v.arch.cc >= v.dtype.min_cc
    end,
    traits = function(v)
      return row_traits(v, 64, false)
    end,
  },
  {
    name = "attention",
    template = "templates/attention.cu.tmpl",
    group_by = { "op", "dtype" },
    -- O = softmax(scale·Q·Kᵀ + mask)·V, FlashAttention-style, with the
    -- split-KV combine for decode. Code paths (traits.path): "ampere"
    -- (mma.sync m16n8k16, cp.async) for sm_80 … sm_90, "turing" (m16n8k8
    -- pairs, synchronous fills) for sm_75, "volta" (m8n8k4, plain shared
    -- loads, P through shared memory) for sm_70; f16 only below sm_80, as
    -- the dtype says; "hopper" (sm_90a, every head dim, the tiles' rows
    -- padded to whole 64-column swizzle rows): wgmma for the blocks of 17
    -- query rows and more, ampere's decode kernel for fewer. On an H100 (bf16,
    -- seq 4096, 2026-11-23, docs/attention.md) it beats sm_90's mma.sync
    -- kernel at each: 295 / 266, 414 / 315, 429 / 276, 458 / 272 TFLOP/s
    -- without a mask.
    ops = {
      { name = "attention_fwd", enum = "KILN_OP_ATTENTION_FWD" },
    },
    shapes = { 32, 64, 80, 96, 128, 160, 192, 256 },
    shape_prefix = "h",
    acts = { "none" },
    -- e4m3 (Q, K, V; O f16 or bf16): sm_90a alone, head dims 64, 128 and
    -- 256 (the others run on the next, as every dtype's do).
    dtypes = { "f16", "bf16", "e4m3" },
    archs = all(space.archs),
    exists = function(v)
      if v.dtype.fp8 then
        return v.arch.specific and (v.shape == 64 or v.shape == 128 or v.shape == 256)
      end
      return v.arch.cc >= 70 and v.arch.cc >= v.dtype.min_cc
    end,
    -- Query rows: up to head dim 128, 4 warps of two 16-row mma tiles each
    -- (each K and V fragment feeds two mmas: 177 -> 265 TFLOP/s at head dim
    -- 128 on an H200, docs/attention.md); past it, where the O accumulators
    -- alone take 128 registers, 4 warps of one tile. Volta: one tile a warp.
    -- 64 keys a step (32 where shared memory is short). Shared memory: Q, K
    -- and V tiles, rows padded to 64 elements for the swizzle, on Volta also
    -- each warp's P tile (16 rows of block_n + 8); at most 96 KB on sm_70,
    -- 64 KB on sm_75, 99 KB on sm_86 / sm_89, 163 KB on sm_80, 227 KB on sm_90.
    traits = function(v)
      local limits = { [70] = 98304, [75] = 65536, [80] = 166912, [86] = 101376, [89] = 101376, [90] = 232448 }
      local path = v.arch.cc >= 80 and "ampere" or v.arch.cc >= 75 and "turing" or "volta"
      if v.arch.specific then path = "hopper" end
      local m_tiles = (path == "hopper" or (path ~= "volta" and v.shape <= 128)) and 2 or 1
      local block_m = 64 * m_tiles
      local mma = path == "ampere" or path == "hopper"
      local block_n = (mma or v.shape <= 128) and 64 or 32
      local dp = (v.shape + 63) // 64 * 64
      local p_tiles = path == "volta" and block_m // 16 * 16 * (block_n + 8) or 0
      local smem = ((block_m + 2 * block_n) * dp + p_tiles) * v.dtype.bytes
      assert(smem <= limits[v.arch.cc], v.name .. ": tiles past the shared memory")
      -- Decode (up to 16 query rows, ampere path): a ring of 64-key K and V
      -- stages, as many as fit up to 3 (two blocks an SM on sm_90 at head
      -- dim 128); none where two do not fit (the FEW_ROWS kernel runs).
      local q_tile, stage = 16 * dp * v.dtype.bytes, 2 * 64 * dp * v.dtype.bytes
      local decode_stages = mma and math.min(3, (limits[v.arch.cc] - q_tile) // stage) or 0
      local t = { path = path, m_tiles = m_tiles,
                  block_m = block_m, block_n = block_n, threads = block_m // (16 * m_tiles) * 32,
                  smem = smem, smem_limit = limits[v.arch.cc], decode_stages = decode_stages >= 2 and decode_stages or 0 }
      -- The mma kernels' block, beside the main kernel's where they differ.
      t.mma_threads, t.mma_smem = t.threads, t.smem
      if v.dtype.fp8 then
        -- "hopper_fp8": the warp-specialized persistent kernel on FP8 wgmma
        -- (persistent: h128 causal 0.771 -> 0.732 M cycles, h256 none / causal
        -- 2.174 / 1.240 -> 2.086 / 1.135, h64 none 1.171 -> 1.106, h128 none
        -- seq 4096 / 1024 1.302 / 0.423 -> 1.293 / 0.393; locked clock, H100,
        -- 2026-11-27), fp8_wgs consumer warpgroups of 64 query rows for calls
        -- without a mask and fp8_masked_wgs for masked ones, key steps of
        -- block_n (Traits::block_n, the walk's key block), Q's and K's rows
        -- in whole 128-byte swizzle rows, each stage K, V as loaded and Vᵀ
        -- (head dim rows of the step's keys in 128-key blocks); as many
        -- stages as fit, up to 4. At h64 three warpgroups of 128-key steps
        -- (as many registers as the three leave: 160 a thread): none / causal
        -- 1.028 / 0.610 -> 0.898 / 0.609 M cycles against two of 256-key steps
        -- (which took 1.201 / 0.679 -> 1.074 / 0.631 M against two of 128,
        -- 192 keys 1.156 / 0.654). At h128 two of 128 keys at first: 256 keys
        -- pass the registers, 192 keys (two stages) took 1.228 / 0.699 ->
        -- 1.297 / 0.743 M, three warpgroups of 96 keys 1.206 / 0.684 -> 1.159
        -- / 0.725 M, of 64 keys 1.288 / 0.818 M. Now three of 128 keys with P
        -- through shared memory (p_smem: S and O leave no registers for P at
        -- 160) for calls without a mask, 1.189 -> 1.129 M, two for masked
        -- ones (three took causal 0.670 -> 0.737 M) (seq 4096, locked clock,
        -- H100, 2026-11-27).
        t.fp8_wgs = v.shape <= 128 and 3 or 2
        t.fp8_masked_wgs = v.shape == 64 and 3 or 2
        t.p_smem = v.shape == 128
        t.path, t.block_n, t.decode_stages = "hopper_fp8", 128, 0
        t.mma_smem = (block_m + 2 * t.block_n) * dp * v.dtype.bytes
        -- split_kv: K, V and Vᵀ on barriers of their own (each slot free as
        -- soon as its tile is read) at h64 and h256: none / causal 2.514 /
        -- 1.396 -> 2.179 / 1.242 M cycles at h256 (two stages), h64 none
        -- 1.214 -> 1.172 M; h128 1.304 / 0.772 -> 1.353 / 0.797 M, so it
        -- keeps a barrier for the whole slot (seq 4096, locked clock, H100,
        -- 2026-11-27).
        t.split_kv = v.shape ~= 128
        -- Each block (F8Block: wgs consumer warpgroups) takes as many stages
        -- as fit beside its Q tile and P tiles, up to 4; the variant's smem is
        -- its larger block's.
        local dq = (v.shape + 127) // 128 * 128
        local stage = 2 * t.block_n * dq + v.shape * 128 * ((t.block_n + 127) // 128)
        t.fp8_stages, t.fp8_qbufs, t.smem = {}, {}, 0
        for _, wgs in ipairs({t.fp8_wgs, t.fp8_masked_wgs}) do
          local q_tile = 64 * wgs * dq
          local p_tiles = (t.p_smem and wgs == 3) and wgs * 64 * t.block_n or 0
          -- 8 · 26 bytes: the most barriers a block has (split_kv's at 4 stages),
          -- besides a second Q tile's two, which it takes only where they fit.
          local stages = math.min(4, (limits[v.arch.cc] - 1024 - 8 * 26 - q_tile - p_tiles) // stage)
          local smem = q_tile + stages * stage + p_tiles + 8 * (2 + (t.split_kv and 6 or 3) * stages) + 1024
          assert(stages >= 2 and smem <= limits[v.arch.cc], v.name .. ": the FP8 tiles past the shared memory")
          -- Blocks of three consumer warpgroups take a second Q tile (and its
          -- two barriers) where it fits beside those stages: the next tile's
          -- Q loads during this one, so each warpgroup goes on to it alone
          -- instead of all three waiting for the last one's O store, and
          -- they keep the stagger they run at within a tile. h128 none
          -- 1.043 -> 1.001 M cycles, h64 none 0.833 -> 0.824 M; the h128
          -- block of two (causal) 0.631 -> 0.637 M, so two keep one (seq
          -- 4096, locked clock, H200, 2026-11-29).
          local q_bufs = wgs == 3 and smem + q_tile + 16 <= limits[v.arch.cc] and 2 or 1
          smem = smem + (q_bufs - 1) * (q_tile + 16)
          t.fp8_stages[wgs], t.fp8_qbufs[wgs], t.smem = stages, q_bufs, math.max(t.smem, smem)
        end
        t.stages = t.fp8_stages[t.fp8_wgs]
        t.threads = 128 * (1 + t.fp8_wgs)
        -- The softmax under the step before's P·V (wait_rescale) at h128 only:
        -- no mask 1.351 -> 1.296 M cycles, causal 0.796 -> 0.769 M; h64 1.151
        -- -> 1.226 M, h256 2.405 -> 2.466 M (seq 4096, locked clock, H100,
        -- 2026-11-26). Since then only in the block with P in shared memory
        -- (the template's wait_rescale): without it h128 none 1.069 -> 1.089 M
        -- there, while the two-warpgroup block of masked calls gained, causal
        -- 0.651 -> 0.636 M (H100, 2026-11-27). O's rescale after a vote.
        t.softmax_under_pv, t.rescale_vote = v.shape == 128, true
        -- edge_steps: the steps a tile masks worked out once (EdgeSteps), not
        -- tile_edge's test each step: h128 none 1.194 -> 1.177 M cycles; at
        -- h64 (three warpgroups at 160 registers) 0.881 -> 0.961 M (seq 4096,
        -- locked clock, H100, 2026-11-27), so h64 keeps the test.
        t.edge_steps = v.shape ~= 64
        -- uniform_cg: the consumer warpgroup's index from a shuffle of lane
        -- 0's, so that ptxas keeps the descriptors of its Q (and P) rows on
        -- the uniform datapath (19 fewer instructions a step at h128: no
        -- R2UR): h128 none / causal 1.129 / 0.670 -> 1.098 / 0.663 M cycles,
        -- h256 1.644 / 0.920 -> 1.641 / 0.918; h64 0.881 / 0.600 -> 0.891 /
        -- 0.604 (and bf16's TMA kernel h64 / h128 none 0.974 / 1.369 -> 1.058
        -- / 1.389), so not there (seq 4096, locked clock, H100, 2026-11-27).
        t.uniform_cg = v.shape >= 128
        -- held_desc: the descriptors' high word a value to ptxas (desc_held),
        -- not a constant it writes again before each wgmma (12 fewer
        -- instructions a step in the three-warpgroup block): h128 none 1.059
        -- -> 1.054 M cycles, causal 0.635 -> 0.633; h64 none 0.842 -> 0.846,
        -- h256 1.571 -> 1.578, so h128 only (seq 4096, locked clock, H100,
        -- 2026-11-27).
        t.held_desc = v.shape == 128
      elseif path == "hopper" then
        -- Two warpgroups of 64 query rows, each S = Q·Kᵀ a wgmma
        -- m64n(wg_block_n)k16 from the tiles and O += P·V a wgmma
        -- m64n(head dim)k16 with P from registers; K and V in a ring of
        -- `stages` tiles of wg_block_n keys (as many as fit, up to 3: 2 past
        -- head dim 128); 1 KB of slack to start the tiles on 1024 bytes.
        -- The ampere kernels of the variant run decode
        -- (up to 16 query rows; their 4 warps need m_tiles 2). Head dim 128
        -- on an H100, bf16, seq 4096, none / causal TFLOP/s (2026-11-23,
        -- docs/attention.md): 64 keys and 2 stages 368 / 304, 128 keys 401
        -- / 336, 128 keys and 3 stages (225 KB) 407 / 340. Past head dim
        -- 128 fewer keys (below): O alone takes up to 128 registers, and two
        -- 128-key tiles of K and V pass the shared memory. Calls of fixed lengths
        -- run the warp-specialized kernel, a producer warpgroup (TMA) before
        -- those two (384 threads; `threads` is the cp.async kernel's, for
        -- varlen): h128 414 / 342 -> 611 / 482 TFLOP/s (H100, 2026-11-25).
        t.threads = 256
        -- Past head dim 128, 80-key steps (FlashAttention 3's tile at 256;
        -- two stages, at 256 of 40 KB K and V tiles beside Q's 64 KB): at a
        -- locked clock (ncu, bf16, seq 4096, none / causal) against 64 keys,
        -- h256 2.84 / 1.59 -> 2.53 / 1.44 M cycles, h192 2.24 / 1.29 ->
        -- 2.19 / 1.24, h160 2.03 / 1.16 -> 1.96 / 1.12; at h128, 144 and 160
        -- keys (two stages) took 3 - 6 % more than 128 (H100, 2026-11-26).
        -- h160 and h192 went from three stages to two, so split_kv below.
        t.wg_block_n = v.shape <= 128 and 128 or 80
        -- tma_wgs: the TMA kernel's consumer warpgroups at most. Where rows
        -- are one 64-column half (head dim 64 and under) a 192-row block of
        -- three (FlashAttention 3's tile at 64) runs calls with no mask: bf16
        -- none h64 440 -> 474, h32 234 -> 290 TFLOP/s; causal h64 on it 340 ->
        -- 298, so masked calls keep two (H100, 2026-11-26). 5 stages instead
        -- of 3 gave nothing (h64 none 475 / 478 against 473 / 477).
        t.tma_wgs = dp == 64 and 3 or 2
        local q_rows = 64 * t.tma_wgs -- Q's tile: the TMA kernel's rows (the cp.async kernel's 128 fit in it)
        local kv_tile = t.wg_block_n * dp * v.dtype.bytes
        local bars = 8 * (2 + 4 * 2) + 16 -- the TMA kernel's at most: Q's full and empty, two stages' full and empty for K and for V, the counted tiles' ring
        t.stages = math.min(3, (limits[v.arch.cc] - 1024 - bars - q_rows * dp * v.dtype.bytes) // (2 * kv_tile))
        -- With two stages (past head dim 128) a slot shared by K and V is free only
        -- once its P·V is done, a step after its S, and the copies of the step
        -- two on start about a step before they are read: consumers waited
        -- on `full` for 28 % of the stall samples (ncu). K and V on barriers
        -- of their own (split_kv) start each copy two steps ahead: h256 454 /
        -- 424 -> 578-590 / 526-548 TFLOP/s (H100, 2026-11-25); at 3 stages it
        -- lost 2-6 % (h64, h128 causal, and h160 when it had 3), so those
        -- share one.
        t.split_kv = t.stages == 2
        -- The softmax under the step before's P·V (wait_rescale, after O's
        -- rescale vote) past head dim 128: h256 none / causal 2.545 / 1.406 ->
        -- 2.420 / 1.347 M cycles. At h128 and h64 the vote alone cost more
        -- (h128 none 1.383 -> 1.451 M, causal 0.774 -> 0.800 M, h64 none
        -- 0.988 -> 1.074 M) than the overlap gave back (h128 none 1.415 M
        -- with both), so those keep neither (bf16, seq 4096, locked clock,
        -- H100, 2026-11-26).
        t.softmax_under_pv = v.shape > 128
        t.rescale_vote = t.softmax_under_pv
        -- With the running max's slack (softmax_step), the vote also pays in
        -- h64's blocks of three consumer warpgroups (no mask): 0.988 -> 0.969 M
        -- cycles; h32's lost 2 % (0.853 -> 0.870 M), two warpgroups under a
        -- mask at h64 too (0.612 -> 0.625 M), h128 1 - 1.5 % (seq 4096, locked
        -- clock, H100, 2026-11-27).
        t.rescale_vote3 = v.shape == 64
        -- exp_fma: in blocks of two consumer warpgroups at head dims up to
        -- 64, one exponential of eight on the FMA pipe (exp2_fma), where the
        -- special-function unit is the busier: h64 causal 0.630 -> 0.615 M
        -- cycles (seq 1024 0.234 -> 0.230), h32 causal 0.573 -> 0.563, varlen
        -- h64 none / causal 1.297 / 0.802 -> 1.281 / 0.791. More lost (h64
        -- causal two of eight 0.649 M), and so did three warpgroups (h64 none
        -- 0.987 -> 1.030), head dims past 64 (h128 none 1.398 -> 1.445 M) and
        -- the e4m3 kernel (h128 none 1.304 -> 1.338 M; bf16 and e4m3, seq
        -- 4096, locked clock, H100, 2026-11-27).
        t.exp_fma = dp == 64 and 1 or 0
        -- imax3: each row's max by VIMNMX3 on the scores' bits (softmax_step's
        -- IMAX3) at h128: none / causal 1.378 / 0.766 -> 1.357 / 0.762 M
        -- cycles (two rounds); at h64 0.973 / 0.607 -> 0.980 / 0.615 and at
        -- h256 2.298 / 1.257 -> 2.299 / 1.262 M it did not pay (seq 4096,
        -- locked clock, H100, 2026-11-27).
        t.imax3 = v.shape == 128
        -- mask_const: in blocks of two consumer warpgroups (masked calls),
        -- mask_scores by compares with constants, once a score without a left
        -- edge. h64 causal 603.4 -> 599.1 k cycles, 16 x 16 heads 2.365 ->
        -- 2.345 M, seq 1024 228.4 -> 221.8 k; in every block it cost h64 none
        -- (three) 0.5 % and h128 causal 0.7 % (bf16, locked clock, H200,
        -- 2026-11-29).
        t.mask_const = v.shape == 64
        t.smem = (q_rows + 2 * t.stages * t.wg_block_n) * dp * v.dtype.bytes + 8 * (2 + (t.split_kv and 4 or 2) * t.stages) + 16 + 1024
        assert(t.smem <= limits[v.arch.cc], v.name .. ": the wgmma tiles past the shared memory")
      end
      return t
    end,
  },
  {
    name = "attention_bwd",
    template = "templates/attention_bwd.cu.tmpl",
    group_by = { "op", "dtype" },
    -- dQ, dK, dV of the forward, FlashAttention-2's order: a block owns a
    -- key block of a kv head and walks the query blocks (of every query
    -- head of its group) that see it; mma.sync m16n8k16 and cp.async on
    -- sm_80 … sm_90 (Hopper GPUs run the sm_90 code where sm_90a has no
    -- variant), and on sm_75 f16 ("turing": m16n8k8 pairs, plain loads) the
    -- head dims whose tiles fit its 64 KB, 32 and 64 (96 and up take 80 KB
    -- and more even with 64 keys and one stage). No sm_70 (no ldmatrix;
    -- Volta's m8n8k4 would be a path of its own). sm_90a ("hopper", every
    -- head dim): the same walk and fills, the five products on wgmma from
    -- shared memory (160 and 192 on sm_90a alone); H100, bf16 seq 4096
    -- (TFLOP/s, against the sm_90 kernel's where there is one): h32 226
    -- (162), h64 308 (166), h96 347 (209), h128 425 (230), h160 269, h192
    -- 288, h256 320 (156) (docs/attention.md). Head dims of whole k16
    -- steps; others run on the next compiled for the GPU.
    ops = {
      { name = "attention_bwd", enum = "KILN_OP_ATTENTION_BWD" },
    },
    shapes = { 32, 64, 96, 128, 160, 192, 256 },
    shape_prefix = "h",
    acts = { "none" },
    dtypes = { "f16", "bf16" },
    archs = all(space.archs),
    -- 160 and 192 on sm_90a alone (the other archs run them on h256's).
    exists = function(v)
      if v.shape == 160 or v.shape == 192 then return v.arch.specific end
      return v.arch.cc >= math.max(75, v.dtype.min_cc) and (v.arch.cc >= 80 or v.shape <= 64)
    end,
    -- 64 query rows a step (block_m) against block_n keys; 8 warps laid out
    -- three ways over the same tiles: S and dP with wm_s warps along the
    -- rows, dK and dV with wn_kv along the keys, dQ with wm_q along the
    -- rows. stages: Q and dO buffers (2: the next step's fill under this
    -- one's math). Shared memory: K, V [block_n][dp]; Q, dO
    -- [stages][block_m][dp]; P, dS [block_m][block_n]; lse2, D [stages]
    -- [block_m] f32. Chosen on an H100 (bf16, seq 4096, 2026-11-25,
    -- docs/attention.md): h128 128 keys and 2 stages 203 TFLOP/s against
    -- 64 keys 153 (2 stages) and 125 (1); h256 64 keys, 1 stage 150 against
    -- 137 with 2. Warp layouts (wm_s, wn_kv, wm_q), the best of those tried
    -- in the standalone harness (docs/attention.md): h128 2, 2, 2 (228 / 205
    -- none / causal against 202 / 182 with 2, 4, 2; in kiln's own build both
    -- run at 216 / 194), h256 2, 2, 2 (155 / 156 against 148 / 148 with 4,
    -- 4, 4; kiln 156 / 155), h64 2, 4, 4. Where 99 KB
    -- is all (sm_86, sm_89), h96 and h128 take 64
    -- keys and 1 stage; h256 takes 148 KB, which those GPUs do not have:
    -- their variant is built (its PTX serves newer GPUs, where the tests
    -- run it) and refuses a call on a GPU with less (NOT_SUPPORTED). sm_75:
    -- 64 keys, 1 stage (48.5 KB), layouts 2, 4, 4.
    traits = function(v)
      local limits = { [75] = 65536, [80] = 166912, [86] = 101376, [89] = 101376, [90] = 232448 }
      local small = limits[v.arch.cc] < 160000
      -- smem_limit: what the arch's GPUs give a block (the launcher's
      -- message); it makes each arch's variants its own, as the forward's.
      local t = { path = v.arch.cc >= 80 and "ampere" or "turing", block_m = 64, threads = 256, min_blocks = 1,
                  smem_limit = limits[v.arch.cc] }
      if v.arch.specific then
        -- Two warpgroups: S, dP, dK, dV of 64 keys each; dQ of half the
        -- head dim each (h128), or (dq_own) of each one's own keys for
        -- every column (up to 64, and at 96, whose half is not whole
        -- 64-column slabs), its f32 sums staged in shared memory for bulk
        -- reductions; tiles of whole slabs (dp), the products over the
        -- first head-dim columns. Past 64 deferred: a step's dQ runs under
        -- the next one's P and dS, dS double-buffered (h96 309 -> 348
        -- TFLOP/s, h128 +7 %; h64 lost 3 %). 1 KB of slack to start the
        -- tiles on 1024 bytes. Past 128 ("wide": K and V 64 KB at h256,
        -- double-buffered Q and dO 128 KB): 64 keys, S and dP of 32 keys a
        -- warpgroup, dK, dV and dQ of half the head dim each, dQ's sums
        -- staged in the step's own Q and dO buffers. At 160 and 192
        -- ("split": half of them is not whole slabs): 64 keys, warpgroup 0
        -- S, P, dS and dV, warpgroup 1 dP (dP − D handed over in f32, x)
        -- and dK, dQ's sums of 64 and hd − 64 columns staged in a buffer
        -- of their own. At 32 ("solo"): one warpgroup of 64 keys a block,
        -- 166 registers, three blocks an SM (all of L1 as shared memory), so
        -- one block's exponentials run under another's products: 190 -> 218
        -- TFLOP/s (H200), where two blocks an SM gained nothing.
        t.path, t.stages = "hopper", 2
        t.split = v.shape == 160 or v.shape == 192
        t.wide = v.shape > 128 and not t.split
        t.dq_own = not t.split and (v.shape <= 64 or v.shape % 64 ~= 0)
        t.deferred = not t.wide and not t.split and v.shape > 64
        t.solo = v.shape == 32
        t.block_n = (t.wide or t.split or t.solo) and 64 or 128
        if t.solo then t.threads, t.min_blocks = 128, 3 end
        local dp = (v.shape + 63) // 64 * 64
        local dq_floats = t.wide and 0 or (t.dq_own and t.threads // 128 or 1) * t.block_m * v.shape
        local x_floats = t.split and t.block_m * t.block_n or 0
        local ds_bufs = t.deferred and 2 or 1
        t.smem = (2 * t.block_n * dp + 2 * t.stages * t.block_m * dp + (1 + ds_bufs) * t.block_m * t.block_n) * v.dtype.bytes
                 + (dq_floats + x_floats) * 4 + 2 * t.stages * t.block_m * 4 + 1024
        assert(t.smem <= limits[90], v.name .. ": tiles past the shared memory")
        return t
      elseif t.path == "turing" then
        t.block_n, t.wm_s, t.wn_kv, t.wm_q, t.stages = 64, 2, 4, 4, 1
      elseif v.shape == 32 then
        t.block_n, t.wm_s, t.wn_kv, t.wm_q, t.stages, t.min_blocks = 128, 2, 8, 4, 2, 2
      elseif v.shape == 256 then
        t.block_n, t.wm_s, t.wn_kv, t.wm_q, t.stages = 64, 2, 2, 2, 1
      elseif small and v.shape > 64 then
        t.block_n, t.wm_s, t.wn_kv, t.wm_q, t.stages = 64, 4, 4, 4, 1
      else
        t.block_n, t.wm_s, t.wn_kv, t.wm_q, t.stages = 128, 2, v.shape == 128 and 2 or 4, v.shape == 128 and 2 or 4, 2
      end
      local dp = (v.shape + 63) // 64 * 64
      t.smem = (2 * t.block_n * dp + 2 * t.stages * t.block_m * dp + 2 * t.block_m * t.block_n) * v.dtype.bytes
               + 2 * t.stages * t.block_m * 4
      assert(t.smem <= math.max(limits[v.arch.cc], v.shape == 256 and limits[80] or 0),
             v.name .. ": tiles past the shared memory")
      return t
    end,
  },
  {
    name = "linear",
    template = "templates/linear.cu.tmpl",
    group_by = { "op", "dtype" },
    -- Y = act(X·Wᵀ + b) (+ R) and the gated act(X·Wgᵀ + bg) ⊙ (X·Wuᵀ + bu)
    -- (+ R), one GEMM with its epilogue; k split over blocks for small m.
    -- Code paths as attention's: "ampere" (m16n8k16, cp.async pipeline),
    -- "turing" (m16n8k8 pairs, synchronous fills), "volta" (m8n8k4), and
    -- "hopper" (sm_90a: wgmma from shared memory).
    ops = {
      { name = "linear_fwd", enum = "KILN_OP_LINEAR_FWD" },
      { name = "gated_linear_fwd", enum = "KILN_OP_GATED_LINEAR_FWD" },
    },
    -- Rows of the block tile, the key the runtime picks by the shape: 128
    -- for large m, 64 for small m (decode; with the k split).
    shapes = { 128, 64 },
    shape_prefix = "m",
    acts = all(space.acts),
    dtypes = { "f16", "bf16", "e4m3", "e5m2" },
    archs = all(space.archs),
    -- FP8 inputs: sm_89 (mma.sync m16n8k32; Hopper GPUs take sm_90a's) with
    -- 128-row tiles only (small m splits k instead), and sm_90a with both.
    exists = function(v)
      return v.arch.cc >= v.dtype.min_cc and
             (not v.dtype.fp8 or v.arch.specific or (v.arch.cc == 89 and v.shape == 128))
    end,
    -- Block tiles of 128 (or 64) rows × 128 output columns (gated: 64 of
    -- each weight), k 64 a stage; 8 warps as 2 × 4 (4 warps as 1 × 4 for 64
    -- rows), so a warp holds 64 × 32 accumulators. Plain 128-row tiles run
    -- two blocks an SM (registers capped at 128) where two of 3 stages fit
    -- the shared memory (sm_90): 263 -> 306 TFLOP/s at 8192³ on an H200
    -- against one block; the gated kernel takes 222 registers and spills
    -- under that cap (78 TFLOP/s), so it runs one block (386). 64 × 64 warp
    -- tiles (128 × 256 blocks) reached 250 (docs/linear.md). Stages: as many
    -- as fit, at most 3 (4 for 64-row tiles; synchronous fills: 2 for
    -- Turing's 64 KB).
    --
    -- Hopper (sm_90a): 128 rows × 256 weight rows (gated: 128 of each),
    -- warp-specialized: a producer warp copies each stage by TMA, two
    -- consumer warpgroups of 64 rows each run a wgmma m64n256k16 from the
    -- swizzled tiles; 4 stages of 48 KB, one persistent block an SM, 384
    -- threads. The cp.async kernel before it (every warp filling, then
    -- computing) ran at 689 TFLOP/s at 8192³ on an H100 (docs/linear.md).
    -- Small m (16 bits): 64 rows × 64 weight rows (gated: 64 of each), one
    -- consumer warpgroup on wgmma m64n64k16 (m64n128k16), 12 stages of 16
    -- KB (9 of 24 KB), 256 threads: 128 × 4096 × 4096 is 128 tiles, a wave
    -- with no split of k (cuBLASLt's choice there: 64 × 64 tiles, 13
    -- stages, no split).
    --
    -- FP8 (sm_90a): the same kernel on wgmma m64n128k32 e4m3 / e5m2, 128 ×
    -- 128 tiles (gated: 64 of each weight) with k 128 a stage (the same
    -- 128-byte rows), 6 stages of 32 KB. After each stage the tensor core's
    -- partial sums, kept in a second set of accumulators, are added into the
    -- f32 ones: 64 + 64 registers, where 256 columns would need 256. 192
    -- columns (96 + 96, 4 stages of 40 KB) lost: 16384 × 4096 × 1024 at 452
    -- against 688 TFLOP/s, 8192³ within the noise (H100, docs/linear.md).
    -- Small m: 16 bits' 64 × 64 tiles (m64n64k32, gated m64n128k32), 12
    -- stages of 16 KB (9 of 24 KB), where 128 × 128 tiles split k 4 ways ran
    -- 128 × 4096 × 4096 at 207 TFLOP/s on an H100 against cuBLASLt's 344
    -- (64 × 64 tiles, 13 stages, no split; docs/linear.md).
    --
    -- The output passes through a 64-row buffer per consumer warpgroup of
    -- out_cols columns (at most 128 where 128 divides the tile, else the
    -- tile's width), stored by TMA in 64 × 64 boxes. The runtime plans calls
    -- by tile_n (the tile's columns per weight) and persistent (one block an
    -- SM).
    --
    -- FP8 (sm_89): the ampere kernel on mma.sync m16n8k32, 128 × 128 tiles
    -- with k 128 a stage (128-byte rows, as 16 bits' 64), 3 stages of 32 KB,
    -- one block an SM, each stage's sums promoted as on sm_90a.
    traits = function(v)
      local limits = { [70] = 98304, [75] = 65536, [80] = 166912, [86] = 101376, [89] = 101376, [90] = 232448 }
      local weights = v.op.name == "gated_linear_fwd" and 2 or 1
      if v.arch.specific then
        local b_rows = v.shape == 64 and 64 * weights or v.dtype.fp8 and 128 or 256
        local block_n = b_rows // weights
        local consumers = v.shape // 64
        local stage = (v.shape + b_rows) * 128
        local out_cols = block_n % 128 == 0 and 128 or block_n
        -- Past the stages: a 64-row output buffer in 16 bits and a barrier
        -- (the residual's loads into it) per consumer warpgroup, a full and
        -- an empty barrier a stage, and 1 KB of slack (TMA's 128-byte swizzle
        -- needs tiles on 1024 bytes). Stages: as many as fit, at most 12.
        local fixed = consumers * (64 * out_cols * 2 + 8) + 1024
        local stages = math.min(12, (limits[v.arch.cc] - fixed) // (stage + 16))
        return { path = "hopper", block_m = v.shape, block_n = block_n, block_k = 128 // v.dtype.bytes,
                 stages = stages, min_blocks = 1, warps_m = 4 * consumers, warps_n = 1, threads = 128 * (1 + consumers),
                 out_cols = out_cols, smem = stages * (stage + 16) + fixed, smem_limit = limits[v.arch.cc],
                 tile_n = block_n, persistent = true }
      end
      local path = v.arch.cc >= 80 and "ampere" or v.arch.cc >= 75 and "turing" or "volta"
      local block_m = v.shape
      local block_n = 128 // weights
      if v.dtype.fp8 then
        return { path = path, block_m = 128, block_n = block_n, block_k = 128, stages = 3, min_blocks = 1,
                 warps_m = 2, warps_n = 4, threads = 256, smem = 3 * 256 * 128, smem_limit = limits[v.arch.cc],
                 tile_n = block_n }
      end
      local stage = (block_m + 128) * 64 * v.dtype.bytes
      local two = path == "ampere" and block_m == 128 and weights == 1 and 2 * 3 * stage <= limits[v.arch.cc]
      local stages = math.min((path == "ampere" and block_m == 64) and 4 or 3, limits[v.arch.cc] // stage)
      local warps_m = block_m // 64
      return { path = path, block_m = block_m, block_n = block_n, block_k = 64, stages = stages, min_blocks = two and 2 or 1,
               warps_m = warps_m, warps_n = 4, threads = warps_m * 4 * 32,
               smem = stages * stage, smem_limit = limits[v.arch.cc], tile_n = block_n }
    end,
  },
}

return space
