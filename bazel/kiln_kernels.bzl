"""kiln_kernels: the generated kernels of kiln, as one CcInfo.

For every compile group of generated/variants.bzl that carries code for an
arch in --//:archs:
  1. gen renders its .cu, all of its variants in one translation unit (one
     action for all groups),
  2. nvcc compiles it (one action per group: parallel, cached), with SASS for
     each chosen arch the group serves and PTX of the arch it is written for
     (or the note of cuda_gencode), and the headers of its family only,
  3. gen writes the selection table (kiln_table.c) of exactly the variants
     built, with the SASS and PTX each carries.
The rule's files are the table source; its CcInfo holds the kernel objects
(and cudart). An arch the toolkit cannot target natively is never dropped:
the build prints one line saying how it was compiled.
"""

load("//bazel:archs.bzl", "ArchsInfo", "PtxInfo")
load("//bazel:cuda.bzl", "cuda_ccinfo", "cuda_compile", "cuda_gencode")

def _kiln_kernels_impl(ctx):
    archs = ctx.attr._archs[ArchsInfo].archs
    for a in archs:
        note = cuda_gencode(a).note
        if note:
            print(note)  # buildifier: disable=print

    # A group is built when it serves a chosen arch: its PTX is that of the
    # arch it is written for (the first), its SASS that of the chosen ones.
    # With --//:ptx=newest, only the groups of its lineage's newest portable
    # arch keep their PTX (gen checks that their variants cover the older
    # archs' keys), so a GPU newer than every arch built still runs each key.
    ptx_all = ctx.attr._ptx[PtxInfo].mode == "all"
    chosen = {}
    newest = {}
    for name, spec in ctx.attr.groups.items():
        lineage, written_for = spec[1], spec[2]
        chosen[name] = [a for a in spec[2:] if a in archs]
        if chosen[name] and not written_for.endswith("a"):
            cc = int(written_for[len("sm_"):])
            newest[lineage] = max(newest.get(lineage, 0), cc)
    groups = []
    for name, spec in ctx.attr.groups.items():
        family, lineage, written_for = spec[0], spec[1], spec[2]
        if chosen[name]:
            ptx = ptx_all or newest.get(lineage) == int(written_for[len("sm_"):].rstrip("a"))
            groups.append(struct(
                name = name,
                family = family,
                gencode = cuda_gencode(written_for, chosen[name], ptx),
                variants = ctx.attr.group_variants[name],
            ))

    gen_lib = ctx.files._gen_lib
    lib_dir = [f for f in gen_lib if f.basename == "main.lua"][0].dirname
    gen_inputs = gen_lib + ctx.files.templates + ctx.files._space

    names = ctx.actions.declare_file(ctx.label.name + "_groups.txt")
    ctx.actions.write(names, "".join([g.name + "\n" for g in groups]))
    sources = [ctx.actions.declare_file("%s_src/%s.cu" % (ctx.label.name, g.name)) for g in groups]
    if sources:
        ctx.actions.run(
            executable = ctx.executable._gen,
            arguments = ["--lib", lib_dir, "groups", "--names", names.path, "--out", sources[0].dirname],
            inputs = gen_inputs + [names],
            outputs = sources,
            mnemonic = "KilnGen",
            progress_message = "Rendering %d compile groups of %s" % (len(sources), ctx.label),
        )

    # Each family's compile actions take only its own headers, so editing one
    # family's header recompiles that family alone.
    family_files = {}
    for target, family in ctx.attr.hdrs.items():
        family_files.setdefault(family, []).append(target.files)
    family_hdrs = {family: depset(transitive = files) for family, files in family_files.items()}
    objects = []
    for g, src in zip(groups, sources):
        if g.family not in family_hdrs:
            fail("compile group %s (family %s) has no headers in hdrs" % (g.name, g.family))
        obj = ctx.actions.declare_file("%s_objs/%s.o" % (ctx.label.name, g.name))
        cuda_compile(
            ctx,
            src = src,
            hdrs = family_hdrs[g.family],
            includes = ["."],
            defines = [],
            gencode_flags = g.gencode.flags,
            out = obj,
            nvcc = ctx.file._nvcc,
        )
        objects.append(obj)

    built = ctx.actions.declare_file(ctx.label.name + "_built.txt")
    ctx.actions.write(built, "".join([
        "%s %d %d\n" % (v, g.gencode.sass, g.gencode.ptx)
        for g in groups
        for v in g.variants
    ]))
    table = ctx.actions.declare_file(ctx.label.name + "_table.c")
    ctx.actions.run(
        executable = ctx.executable._gen,
        arguments = ["--lib", lib_dir, "table", "--built", built.path, "--out", table.path],
        inputs = gen_inputs + [built],
        outputs = [table],
        mnemonic = "KilnTable",
        progress_message = "Writing the selection table of %s" % ctx.label,
    )

    cc_info, _ = cuda_ccinfo(ctx, objects, [ctx.attr._cudart])
    return [DefaultInfo(files = depset([table])), cc_info]

kiln_kernels = rule(
    implementation = _kiln_kernels_impl,
    doc = "Renders, compiles and tabulates the generated kernel variants of the chosen archs.",
    attrs = {
        "groups": attr.string_list_dict(
            doc = "compile group -> [family, lineage, the arch it is written for, further archs it has SASS for], from generated/variants.bzl",
        ),
        "group_variants": attr.string_list_dict(doc = "compile group -> its variants, from generated/variants.bzl"),
        "templates": attr.label_list(allow_files = [".tmpl"], doc = "the families' templates"),
        "hdrs": attr.label_keyed_string_dict(
            allow_files = [".h", ".cuh"],
            doc = "headers the rendered sources include -> the family whose sources include them",
        ),
        "_archs": attr.label(default = "//:archs", providers = [ArchsInfo]),
        "_ptx": attr.label(default = "//:ptx", providers = [PtxInfo]),
        "_gen": attr.label(default = "//gen", executable = True, cfg = "exec"),
        "_gen_lib": attr.label(default = "//gen:lib"),
        "_space": attr.label(default = "//gen:variants.lua", allow_single_file = True),
        "_cudart": attr.label(default = "@local_cuda//:cudart_static"),
        "_nvcc": attr.label(default = "@local_cuda//:nvcc", allow_single_file = True),
        "_cc_toolchain": attr.label(default = "@bazel_tools//tools/cpp:current_cc_toolchain"),
    },
    fragments = ["cpp"],
    toolchains = ["@bazel_tools//tools/cpp:toolchain_type"],
)

def _static_library_impl(ctx):
    libs = []
    for li in ctx.attr.dep[CcInfo].linking_context.linker_inputs.to_list():
        if li.owner.workspace_name:
            continue  # external: cudart comes from the toolkit
        for lib in li.libraries:
            a = lib.pic_static_library or lib.static_library
            if a:
                libs.append(a)
    out = ctx.actions.declare_file(ctx.attr.out)
    script = "\n".join(["create " + out.path] + ["addlib " + a.path for a in libs] + ["save", "end", ""])
    ctx.actions.run_shell(
        command = "printf '%s' \"$1\" | ar -M",
        arguments = [script],
        inputs = libs,
        outputs = [out],
        mnemonic = "KilnArchive",
        progress_message = "Archiving %s" % ctx.attr.out,
        use_default_shell_env = True,
    )
    return [DefaultInfo(files = depset([out]))]

kiln_static_library = rule(
    implementation = _static_library_impl,
    doc = "One static archive of a cc_library and the libraries of this workspace it depends on.",
    attrs = {
        "dep": attr.label(providers = [CcInfo]),
        "out": attr.string(doc = "archive file name, e.g. libkiln.a"),
    },
)
