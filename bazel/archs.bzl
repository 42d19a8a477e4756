"""GPU arch selection: the `archs_flag` build setting behind `--//:archs`.

  --//:archs=all               every arch in VALID_ARCHS (the default)
  --//:archs=sm_80,sm_90       just these, in VALID_ARCHS order, deduplicated

Rules read the parsed list through ArchsInfo, e.g. with an attribute
`"_archs": attr.label(default = "//:archs", providers = [ArchsInfo])` and
`ctx.attr._archs[ArchsInfo].archs`. An unknown name fails the build.
"""

# Variant names kiln can build, oldest first.
VALID_ARCHS = ["sm_70", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a"]

ArchsInfo = provider(
    doc = "GPU archs selected with --//:archs.",
    fields = {"archs": "list of arch names (strings such as \"sm_80\"), in VALID_ARCHS order"},
)

def parse_archs(value):
    """Parses an --//:archs value ("all" or "sm_80,sm_90") into a list of names."""
    if value.strip() == "all":
        return list(VALID_ARCHS)
    names = [n.strip() for n in value.split(",") if n.strip()]
    unknown = [n for n in names if n not in VALID_ARCHS]
    if unknown or not names:
        fail("--//:archs=%s: unknown arch %s; valid: all, %s" % (
            value,
            ", ".join(unknown) if unknown else "(none given)",
            ", ".join(VALID_ARCHS),
        ))
    return [a for a in VALID_ARCHS if a in names]

def _archs_flag_impl(ctx):
    return [ArchsInfo(archs = parse_archs(ctx.build_setting_value))]

archs_flag = rule(
    implementation = _archs_flag_impl,
    build_setting = config.string(flag = True),
    doc = "Comma-separated GPU arch list (or \"all\"); provides ArchsInfo.",
)

# --//:ptx: which compile groups embed PTX.
#   all      every group, PTX of the arch it is written for (the default; the
#            tests run older-arch variants on a newer GPU through it)
#   newest   only the groups a newer GPU needs: in each lineage (an op, and
#            dtype where the family groups by it), those written for the
#            newest portable arch built, and any group that has no SASS
PTX_MODES = ["all", "newest"]

PtxInfo = provider(
    doc = "Which compile groups embed PTX (--//:ptx).",
    fields = {"mode": "one of PTX_MODES"},
)

def _ptx_flag_impl(ctx):
    mode = ctx.build_setting_value.strip()
    if mode not in PTX_MODES:
        fail("--//:ptx=%s: valid: %s" % (mode, ", ".join(PTX_MODES)))
    return [PtxInfo(mode = mode)]

ptx_flag = rule(
    implementation = _ptx_flag_impl,
    build_setting = config.string(flag = True),
    doc = "Which compile groups embed PTX: \"all\" or \"newest\"; provides PtxInfo.",
)
