-- variants.lua: the variant space of kiln, declared once.
--
-- Every kernel kiln ships is one point of family × op × shape key × activation
-- × dtype × arch that the family's `exists` rule admits. The generator walks the
-- axes in the order written here, so the variant list, the generated sources and
-- the selection table are deterministic. Families add their axes and traits
-- here and nowhere else; the runtime and the build read what gen derives.

local space = {}

-- Archs a variant can be tuned for. `cc` is the compute capability it needs.
space.archs = {
  { name = "sm_70", cc = 70 },
  { name = "sm_75", cc = 75 },
  { name = "sm_80", cc = 80 },
  { name = "sm_86", cc = 86 },
  { name = "sm_89", cc = 89 },
  { name = "sm_90", cc = 90 },
}

-- Element types. `min_cc`: the first arch with native arithmetic for it.
space.dtypes = {
  { name = "f32", enum = "KILN_DTYPE_F32", ctype = "float", bytes = 4, min_cc = 70 },
  { name = "f16", enum = "KILN_DTYPE_F16", ctype = "__half", bytes = 2, min_cc = 70 },
  { name = "bf16", enum = "KILN_DTYPE_BF16", ctype = "__nv_bfloat16", bytes = 2, min_cc = 80 },
}

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

space.families = {
  {
    name = "elementwise",
    template = "templates/elementwise.cu.tmpl",
    -- y = act(x·scale + bias) and y = act(gate)·up, with their backward passes.
    ops = {
      { name = "elementwise_fwd", enum = "KILN_OP_ELEMENTWISE_FWD" },
      { name = "elementwise_bwd", enum = "KILN_OP_ELEMENTWISE_BWD" },
      { name = "gated_fwd", enum = "KILN_OP_GATED_FWD" },
      { name = "gated_bwd", enum = "KILN_OP_GATED_BWD" },
    },
    shapes = { 0 },
    acts = all(space.acts),
    dtypes = all(space.dtypes),
    archs = all(space.archs),
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
    -- LayerNorm and RMSNorm over the last dimension, with the fused
    -- residual add (s = x + residual, s written out) and saved statistics.
    ops = {
      { name = "layernorm_fwd", enum = "KILN_OP_LAYERNORM_FWD" },
      { name = "rmsnorm_fwd", enum = "KILN_OP_RMSNORM_FWD" },
    },
    -- Hidden sizes held whole on chip as compile-time constants; 0 is the
    -- generic variant for every other size.
    shapes = { 512, 768, 1024, 2048, 2560, 4096, 5120, 8192, 12288, 16384, 0 },
    shape_prefix = "h",
    acts = { "none" },
    dtypes = all(space.dtypes),
    archs = all(space.archs),
    exists = function(v)
      return v.arch.cc >= v.dtype.min_cc
    end,
    -- A row is split into 16-byte packs. Up to 256 packs a row is one warp's
    -- (4 rows a block); longer rows get a block, sized so each thread holds
    -- at most 4 packs (32 f32 values for 16-bit types) in registers.
    traits = function(v)
      local vec = 16 // v.dtype.bytes
      if v.shape == 0 then
        return { vec = vec, packs = 0, threads = 256, rows_per_block = 1, packs_per_thread = 0, smem = 0 }
      end
      assert(v.shape % vec == 0, "hidden sizes are multiples of a pack")
      local packs = v.shape // vec
      if packs <= 256 then
        return { vec = vec, packs = packs, threads = 128, rows_per_block = 4,
                 packs_per_thread = (packs + 31) // 32, smem = 0 }
      end
      local threads = ((packs // 4 + 31) // 32) * 32
      assert(threads <= 1024, "a row fits one block")
      return { vec = vec, packs = packs, threads = threads, rows_per_block = 1,
               packs_per_thread = (packs + threads - 1) // threads, smem = 0 }
    end,
  },
}

return space
