-- main.lua: the command line of kiln's generator (run by the gen binary).
--
--   gen list [--family F] [--op OP] [--arch ARCH]     one line per variant
--   gen render --out DIR [--names FILE] [filters]      one .cu per variant
--   gen groups --out DIR [--names FILE] [filters]      one .cu per compile group
--   gen table --built FILE --out FILE                  the C selection table
--   gen generated --out DIR                            generated/ as checked in
--   gen check DIR                                      is DIR what `generated` writes?
--   gen template TEMPLATE --out FILE [KEY=VALUE...]    render one template (tests)
--
-- Paths are relative to the repository root (--root, default "."). Output is
-- byte-for-byte deterministic; files are written whole or not at all.

local engine = dofile(GEN_LIB .. "/engine.lua")

local function fail(msg)
  error(msg, 0)
end

local function parse_args(argv)
  local opts, pos = {}, {}
  local i = 1
  while i <= #argv do
    local a = argv[i]
    local key = a:match("^%-%-([%w_-]+)$")
    if key then
      if argv[i + 1] == nil then fail(("option --%s needs a value"):format(key)) end
      opts[key] = argv[i + 1]
      i = i + 2
    else
      pos[#pos + 1] = a
      i = i + 1
    end
  end
  return opts, pos
end

local opts, pos = parse_args(GEN_ARGS)
local root = opts.root or "."
local function rooted(p) return root .. "/" .. p end

local space = dofile(rooted("gen/variants.lua"))

local function by_name(list)
  local t = {}
  for _, x in ipairs(list) do t[x.name] = x end
  return t
end
local archs, dtypes, acts = by_name(space.archs), by_name(space.dtypes), by_name(space.acts)

-- <op>[_h<shape>|_hany][_<act>]_<dtype>_<arch>: the shape part only for
-- families with a shape axis, the activation only where there is a choice.
local function variant_name(v)
  local shape = ""
  if v.family.shape_prefix then
    shape = "_" .. v.family.shape_prefix .. (v.shape == 0 and "any" or tostring(v.shape))
  end
  local act = #v.family.acts > 1 and ("_" .. v.act.name) or ""
  return ("%s%s%s_%s_%s"):format(v.op.name, shape, act, v.dtype.name, (v.arch.name:gsub("_", "")))
end

-- Every variant of the space, in declaration order.
local function enumerate()
  local out = {}
  for _, fam in ipairs(space.families) do
    for _, op in ipairs(fam.ops) do
      for _, shape in ipairs(fam.shapes) do
        for _, act_name in ipairs(fam.acts) do
          for _, dtype_name in ipairs(fam.dtypes) do
            for _, arch_name in ipairs(fam.archs) do
              local v = {
                family = fam, op = op, shape = shape,
                act = acts[act_name], dtype = dtypes[dtype_name], arch = archs[arch_name],
              }
              assert(v.act and v.dtype and v.arch, "family " .. fam.name .. " names an unknown axis value")
              if fam.exists(v) then
                v.name = variant_name(v)
                v.traits = fam.traits(v)
                out[#out + 1] = v
              end
            end
          end
        end
      end
    end
  end
  return out
end

-- The operands of a wgmma f32 accumulator of n columns, held as d[n / 8][4]
-- (m16n8 fragments), for a template's inline PTX: "%0, …, %(n/2 - 1)" and
-- their constraints "+f"(d[j][e]).
local function wgmma_acc(n)
  local regs, ops = {}, {}
  for r = 0, n // 2 - 1 do
    regs[#regs + 1] = "%" .. r
    ops[#ops + 1] = ('"+f"(d[%d][%d])'):format(r // 4, r % 4)
  end
  return table.concat(regs, ", "), table.concat(ops, ", ")
end

local function render_variant(v)
  local env = { v = v, traits = v.traits, space = space, wgmma_acc = wgmma_acc }
  return engine.render(rooted(v.family.template), env, v.family.template)
end

local function short_arch(arch) return (arch.name:gsub("_", "")) end

-- v's source as u's would read if the two differed only in name and arch.
local function as_if(v, u)
  return (render_variant(v):gsub(v.name, u.name):gsub(v.arch.name, u.arch.name))
end

-- The variants kiln builds. A variant whose source is that of the same point
-- on an older arch of its major version (names aside: sm_86 and sm_89 norms
-- are the sm_80 ones) is no variant of its own: the older one is built with
-- SASS for its arch too (v.sass_archs, oldest first), since SASS of one major
-- version runs on its later minor versions but is tuned for each. Arch-specific
-- archs (sm_90a) are never merged.
local function variants()
  local out, seen = {}, {}
  for _, v in ipairs(enumerate()) do
    v.sass_archs = { v.arch }
    local merged = false
    if not v.arch.specific then
      local key = table.concat({ v.family.name, v.op.name, v.shape, v.act.name, v.dtype.name, v.arch.cc // 10 }, "/")
      seen[key] = seen[key] or {}
      for _, u in ipairs(seen[key]) do
        if as_if(v, u) == render_variant(u) then
          u.sass_archs[#u.sass_archs + 1] = v.arch
          merged = true
          break
        end
      end
      if not merged then seen[key][#seen[key] + 1] = v end
    end
    if not merged then out[#out + 1] = v end
  end
  return out
end

local function serves(v, arch_name)
  for _, a in ipairs(v.sass_archs) do
    if a.name == arch_name then return true end
  end
  return false
end

local function arch_names(v)
  local names = {}
  for i, a in ipairs(v.sass_archs) do names[i] = a.name end
  return names
end

-- The compile group of a variant: its family's variants of the same
-- `group_by` axes (op, dtype) and archs, compiled as one translation unit so
-- that the headers are parsed once for all of them. Named after what it holds:
-- rmsnorm_fwd_sm80_86_89 (an op on sm_80, with SASS for sm_86 and sm_89 too),
-- attention_fwd_bf16_sm90a.
-- Its lineage is the name without the archs: the groups of one lineage hold
-- the same op (and dtype) on different archs.
local function group_name(v)
  local by = {}
  for _, axis in ipairs(v.family.group_by) do by[axis] = true end
  local lineage = by.op and v.op.name or v.family.name
  if by.dtype then lineage = lineage .. "_" .. v.dtype.name end
  local archs = { short_arch(v.sass_archs[1]) }
  for i = 2, #v.sass_archs do archs[#archs + 1] = tostring(v.sass_archs[i].cc) end
  return lineage .. "_" .. table.concat(archs, "_"), lineage
end

-- The groups of `list`, in order of first appearance: { name, lineage, family, archs, variants }.
local function groups_of(list)
  local out, by_name = {}, {}
  for _, v in ipairs(list) do
    local name, lineage = group_name(v)
    local g = by_name[name]
    if not g then
      g = { name = name, lineage = lineage, family = v.family, archs = arch_names(v), variants = {} }
      by_name[name] = g
      out[#out + 1] = g
    end
    g.variants[#g.variants + 1] = v
  end
  return out
end

-- One translation unit of a group's variants: their #include lines once, at
-- the top, then each variant in a namespace of its own (blank lines where its
-- includes stood, so every #line still lands on its template line).
local function render_group(g)
  local includes, seen, bodies = {}, {}, {}
  for _, v in ipairs(g.variants) do
    local body = render_variant(v):gsub("\n(#include [^\n]*)", function(line)
      if not seen[line] then
        seen[line] = true
        includes[#includes + 1] = line
      end
      return "\n"
    end)
    bodies[#bodies + 1] = ("namespace kiln_%s {\n%s} /* namespace kiln_%s */\n"):format(v.name, body, v.name)
  end
  return table.concat({
    ("/* %s: generated by gen from %s: do not edit. %d variants, one translation unit. */"):format(
      g.name, g.family.template, #g.variants),
    table.concat(includes, "\n"),
    table.concat(bodies),
  }, "\n")
end

local function filtered(list)
  local out = {}
  for _, v in ipairs(list) do
    if (not opts.family or v.family.name == opts.family)
      and (not opts.op or v.op.name == opts.op)
      and (not opts.arch or serves(v, opts.arch)) then
      out[#out + 1] = v
    end
  end
  return out
end

local function read_lines(path)
  local lines = {}
  for line in engine.read(path):gmatch("[^\n]+") do lines[#lines + 1] = line end
  return lines
end

-- generated/: the variant list Bazel reads and a table for people.
local function quoted(list)
  local q = {}
  for i, x in ipairs(list) do q[i] = '"' .. x .. '"' end
  return table.concat(q, ", ")
end

-- A release build (--//:ptx=newest) keeps PTX only in a lineage's groups of
-- its newest portable arch built; that is sound while every key (shape,
-- activation, dtype) of a lineage's portable arch is also a key of each newer
-- portable arch of it. Fails naming the first key that is not.
local function check_lineages(list)
  local keys = {}
  for _, v in ipairs(list) do
    if not v.arch.specific then
      local _, lineage = group_name(v)
      keys[lineage] = keys[lineage] or {}
      keys[lineage][v.arch.cc] = keys[lineage][v.arch.cc] or {}
      keys[lineage][v.arch.cc][table.concat({ v.shape, v.act.name, v.dtype.name }, "/")] = v
    end
  end
  for lineage, by_cc in pairs(keys) do
    for cc, set in pairs(by_cc) do
      for newer, newer_set in pairs(by_cc) do
        if newer > cc then
          for key, v in pairs(set) do
            if not newer_set[key] then
              fail(("%s has no counterpart on sm_%d (%s): --//:ptx=newest would leave it without PTX for newer GPUs")
                :format(v.name, newer, lineage))
            end
          end
        end
      end
    end
  end
end

-- generated/: the compile groups Bazel reads and a table for people.
local function generated_files()
  local list = variants()
  check_lineages(list)
  local groups = groups_of(list)
  local bzl = {
    "# Generated by gen from gen/variants.lua: do not edit. Run `bazel run //gen:update`.",
    "# Compile group -> its family, its lineage (the name less the archs), then the",
    "# archs it carries SASS for (the first is the arch it is written for), in the",
    "# order of the variant space.",
    "KILN_GROUPS = {",
  }
  for _, g in ipairs(groups) do
    bzl[#bzl + 1] = ('    "%s": [%s],'):format(g.name, quoted({ g.family.name, g.lineage, table.unpack(g.archs) }))
  end
  bzl[#bzl + 1] = "}"
  bzl[#bzl + 1] = ""
  bzl[#bzl + 1] = "# Compile group -> its variants."
  bzl[#bzl + 1] = "KILN_GROUP_VARIANTS = {"
  for _, g in ipairs(groups) do
    local names = {}
    for i, v in ipairs(g.variants) do names[i] = v.name end
    bzl[#bzl + 1] = ('    "%s": [%s],'):format(g.name, quoted(names))
  end
  bzl[#bzl + 1] = "}"
  local md = {
    "<!-- Generated by gen from gen/variants.lua: do not edit. Run `bazel run //gen:update`. -->",
    "# kiln variants",
    "",
    ("%d variants in %d compile groups. The build compiles the groups of the archs chosen with `--//:archs`."):format(
      #list, #groups),
    "A variant carries SASS for each arch under \"SASS\" (of those chosen) and PTX of the arch it is written for.",
    "",
    "| variant | family | op | shape | activation | dtype | arch | SASS | threads |",
    "|---|---|---|---|---|---|---|---|---|",
  }
  for _, v in ipairs(list) do
    md[#md + 1] = ("| %s | %s | %s | %s | %s | %s | %s | %s | %d |"):format(
      v.name, v.family.name, v.op.name, v.shape == 0 and "-" or tostring(v.shape),
      v.act.name, v.dtype.name, v.arch.name, table.concat(arch_names(v), ", "), v.traits.threads)
  end
  return {
    ["variants.bzl"] = table.concat(bzl, "\n") .. "\n",
    ["VARIANTS.md"] = table.concat(md, "\n") .. "\n",
  }
end

local function sorted_keys(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys)
  return keys
end

local commands = {}

function commands.list()
  for _, v in ipairs(filtered(variants())) do
    io.write(("%s %s %s %s %s %s %s\n"):format(v.name, v.family.name, v.op.name, v.act.name, v.dtype.name, v.arch.name,
      table.concat(arch_names(v), ",")))
  end
end

-- The items of `list` named in the --names file, in its order, or all of
-- `list` without one; `what` names an item in the error for an unknown name.
local function named(list, what)
  if not opts.names then return list end
  local all, out = {}, {}
  for _, x in ipairs(list) do all[x.name] = x end
  for _, name in ipairs(read_lines(opts.names)) do
    out[#out + 1] = all[name] or fail(("%s: unknown %s %s"):format(opts.names, what, name))
  end
  return out
end

function commands.render()
  local out = opts.out or fail("render needs --out DIR")
  for _, v in ipairs(named(filtered(variants()), "variant")) do
    engine.write_atomic(out .. "/" .. v.name .. ".cu", render_variant(v))
  end
end

-- One .cu per compile group (--names: a file of group names, one a line).
function commands.groups()
  local out = opts.out or fail("groups needs --out DIR")
  for _, g in ipairs(named(groups_of(filtered(variants())), "compile group")) do
    engine.write_atomic(out .. "/" .. g.name .. ".cu", render_group(g))
  end
end

-- The selection table: one C record per built variant. --built lists
-- "NAME SASS_ARCH PTX_ARCH" per line, as the build compiled each variant.
function commands.table()
  local built = opts.built or fail("table needs --built FILE")
  local out = opts.out or fail("table needs --out FILE")
  local all = {}
  for _, v in ipairs(variants()) do all[v.name] = v end
  local rows = {}
  for _, line in ipairs(read_lines(built)) do
    local name, sass, ptx = line:match("^(%S+) (%d+) (%d+)$")
    if not name then fail(("%s: bad line '%s' (want NAME SASS PTX)"):format(built, line)) end
    local v = all[name] or fail(("%s: unknown variant %s"):format(built, name))
    rows[#rows + 1] = { v = v, sass = tonumber(sass), ptx = tonumber(ptx) }
  end
  local c = {
    "/* Generated by gen from gen/variants.lua and the build's arch list: do not edit. */",
    '#include "runtime/variant.h"',
    "",
  }
  for _, r in ipairs(rows) do
    c[#c + 1] = ("kiln_status kiln_launch_%s(const void *args, kiln_stream stream);"):format(r.v.name)
    c[#c + 1] = ("kiln_status kiln_attributes_%s(kiln_kernel_attributes *attrs);"):format(r.v.name)
  end
  c[#c + 1] = ""
  c[#c + 1] = "const kiln_variant kiln_variant_table[] = {"
  for _, r in ipairs(rows) do
    local v = r.v
    c[#c + 1] = ('    {"%s", %s, %s, %d, %s, %d, %d, %d, %d, %d, kiln_launch_%s, kiln_attributes_%s, %d, %d},'):format(
      v.name, v.op.enum, v.dtype.enum, v.shape, v.act.enum, v.arch.cc, r.sass, r.ptx,
      v.traits.threads, v.traits.smem, v.name, v.name, v.traits.tile_n or 0, v.traits.persistent and 1 or 0)
  end
  c[#c + 1] = "    {0}"
  c[#c + 1] = "};"
  c[#c + 1] = ("const int kiln_variant_table_size = %d;"):format(#rows)
  engine.write_atomic(out, table.concat(c, "\n") .. "\n")
end

function commands.generated()
  local out = opts.out or fail("generated needs --out DIR")
  local files = generated_files()
  for _, name in ipairs(sorted_keys(files)) do
    engine.write_atomic(out .. "/" .. name, files[name])
  end
end

function commands.check()
  local dir = pos[2] or fail("check needs a directory")
  local files = generated_files()
  local stale = {}
  for _, name in ipairs(sorted_keys(files)) do
    local f = io.open(dir .. "/" .. name, "rb")
    local have = f and f:read("a")
    if f then f:close() end
    if have ~= files[name] then stale[#stale + 1] = dir .. "/" .. name end
  end
  if #stale > 0 then
    fail(("stale: %s; run `bazel run //gen:update`"):format(table.concat(stale, ", ")))
  end
  io.write(("%s is fresh\n"):format(dir))
end

-- Renders one template with string arguments; the tests use it on fixtures.
function commands.template()
  local path = pos[2] or fail("template needs a template path")
  local out = opts.out or fail("template needs --out FILE")
  local env = {}
  for i = 3, #pos do
    local k, val = pos[i]:match("^([%w_]+)=(.*)$")
    if not k then fail(("bad argument '%s' (want KEY=VALUE)"):format(pos[i])) end
    env[k] = tonumber(val) or val
  end
  engine.write_atomic(out, engine.render(path, env))
end

local cmd = pos[1] or fail("usage: gen --lib DIR [--root DIR] list|render|groups|table|generated|check|template ...")
local fn = commands[cmd] or fail(("unknown command '%s' (list, render, groups, table, generated, check, template)"):format(cmd))
fn()
