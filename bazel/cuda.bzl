"""CUDA compilation for kiln: nvcc -gencode selection (cuda_gencode), one
nvcc action per source (cuda_compile), objects -> CcInfo (cuda_ccinfo). A rule
that uses them (kiln_kernels.bzl) needs the C++ toolchain: a `_cc_toolchain`
attribute, fragments = ["cpp"] and the cpp toolchain type.
"""

load("@bazel_tools//tools/cpp:toolchain_utils.bzl", "find_cpp_toolchain")
load("@local_cuda//:defs.bzl", "CUDA_ARCHS", "CUDA_VERSION")
load("//bazel:archs.bzl", "VALID_ARCHS")

# Family names for the notes about archs the toolkit no longer targets.
_FAMILY = {70: "Volta", 72: "Volta", 75: "Turing"}

def cuda_gencode(arch, sass_archs = None, ptx = True, cuda_archs = CUDA_ARCHS):
    """Chooses the nvcc -gencode flags for code written for one arch.

    Args:
      arch: the arch the code is written for, from VALID_ARCHS, e.g. "sm_80"
        or "sm_90a".
      sass_archs: the archs of arch's major version to carry SASS for (default
        [arch]); the code's PTX is that of arch.
      ptx: whether to embed the PTX; code that would have no SASS keeps it.
      cuda_archs: compute archs the toolkit supports (ints), default CUDA_ARCHS.

    Returns:
      struct(flags = [-gencode flags], sass = int SM of the oldest SASS or 0,
             ptx = int compute arch of the embedded PTX or 0,
             note = "" or why the result differs from the request).
    """
    if arch not in VALID_ARCHS:
        fail("unknown CUDA arch %r; valid: %s" % (arch, ", ".join(VALID_ARCHS)))
    sass_archs = sass_archs or [arch]
    n = int(arch[len("sm_"):].rstrip("a"))
    sass = [int(a[len("sm_"):].rstrip("a")) for a in sass_archs]
    for a, s in zip(sass_archs, sass):
        if a not in VALID_ARCHS or s // 10 != n // 10 or s < n or a.endswith("a") != arch.endswith("a"):
            fail("%s: cannot carry SASS for %s (only later archs of its major version)" % (arch, a))
    if arch.endswith("a"):
        # Arch-specific features (wgmma, setmaxnreg): SASS only, never PTX.
        if n not in cuda_archs:
            fail("%s: CUDA %s cannot target compute_%d" % (arch, CUDA_VERSION, n))
        return struct(
            flags = ["-gencode=arch=compute_%da,code=sm_%da" % (n, n)],
            sass = n,
            ptx = 0,
            note = "",
        )
    if n in cuda_archs:
        return struct(
            flags = ["-gencode=arch=compute_%d,code=[%s]" % (n, ",".join(["sm_%d" % s for s in sass] + (["compute_%d" % n] if ptx else [])))],
            sass = sass[0],
            ptx = n if ptx else 0,
            note = "",
        )
    lowest = min(cuda_archs)
    if n > lowest:
        fail("%s: CUDA %s cannot target compute_%d (supported: %s)" % (
            arch,
            CUDA_VERSION,
            n,
            ", ".join(["compute_%d" % a for a in cuda_archs]),
        ))

    # Too old for the toolkit (sm_70 on CUDA 13): PTX of its oldest arch, and
    # SASS for the archs asked for that it can target.
    native = [s for s in sass if s in cuda_archs]
    ptx = ptx or not native
    return struct(
        flags = ["-gencode=arch=compute_%d,code=[%s]" % (lowest, ",".join(["sm_%d" % s for s in native] + (["compute_%d" % lowest] if ptx else [])))],
        sass = native[0] if native else 0,
        ptx = lowest if ptx else 0,
        note = "%s: CUDA %s cannot target %s; compiled as compute_%d PTX%s, not selectable on a real %s device" % (
            arch,
            CUDA_VERSION,
            _FAMILY.get(n, "sm_%d" % n),
            lowest,
            "".join([" and sm_%d SASS" % s for s in native]),
            arch,
        ),
    )

def cuda_compile(ctx, src, hdrs, includes, defines, gencode_flags, out, nvcc, extra_inputs = []):
    """Declares one nvcc action compiling `src` (a .cu File) to the object `out`.

    Args:
      ctx: rule context; the rule needs the C++ toolchain (see the module doc).
      src: the .cu File.
      hdrs: depset of header Files the source may include.
      includes: list of -I directories (execroot-relative strings).
      defines: list of -D values ("NAME" or "NAME=VALUE").
      gencode_flags: from cuda_gencode(...).flags.
      out: declared .o File.
      nvcc: the nvcc File (@local_cuda//:nvcc).
      extra_inputs: further input Files.
    """
    cc_toolchain = find_cpp_toolchain(ctx)
    args = ctx.actions.args()
    # --compress-mode=size: the fatbins (PTX above all) shrink about 3x, which
    # keeps the whole variant set within the 64 MiB budget; measured 2026-11-22
    # on elementwise_bwd_gelu_tanh_bf16_sm90: 110 KB -> 33 KB.
    args.add_all(["-c", "-O3", "-std=c++17", "--expt-relaxed-constexpr", "-Xcompiler=-fPIC", "--compress-mode=size"])
    args.add("-ccbin=" + cc_toolchain.compiler_executable)
    args.add_all(gencode_flags)
    args.add_all(includes, format_each = "-I%s")
    args.add_all(defines, format_each = "-D%s")
    args.add("-o", out)
    args.add(src)

    # nvcc locates cicc, ptxas and its headers relative to the path it is
    # invoked by (argv[0]); through the sandbox's per-file symlink that
    # directory is nearly empty, so run the resolved real path instead.
    # Each action gets its own TMPDIR: in the linux-sandbox every nvcc has the
    # same PID, so parallel actions sharing /tmp overwrite each other's
    # tmpxft_<pid>_* files.
    # ptxas serializing wgmma (codes C7510 and on: a wait after every
    # product, when a branch on the warpgroup looks divergent or registers
    # run short) is only an info line, and the kernel still runs, a fifth to
    # a tenth slower: here it fails the action.
    ctx.actions.run_shell(
        command = """set -e
nvcc="$(readlink -f "{nvcc}")"
tmp="$PWD/{out}.tmp"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp"
export TMPDIR="$tmp"
rc=0
"$nvcc" "$@" 2> "$tmp/log" || rc=$?
if [ "$rc" -ne 0 ]; then
  cat "$tmp/log" >&2
  exit "$rc"
fi
cat "$tmp/log" >&2
if grep -q "wgmma.mma_async instructions are serialized" "$tmp/log"; then
  echo "kiln: ptxas serialized the wgmma of a kernel above (see its C75xx line); make the branches around them warp-uniform or free registers" >&2
  exit 1
fi
""".format(nvcc = nvcc.path, out = out.path),
        arguments = [args],
        inputs = depset([src, nvcc] + extra_inputs, transitive = [hdrs]),
        outputs = [out],
        # PATH for the host compiler's tools (as, ld) run by nvcc/gcc.
        use_default_shell_env = True,
        mnemonic = "Nvcc",
        progress_message = "Compiling CUDA %s" % src.short_path,
    )

def cuda_ccinfo(ctx, objects, deps):
    """Archives `objects` (PIC .o Files) into a CcInfo merged with deps' CcInfo.

    Args:
      ctx: rule context; the rule needs the C++ toolchain (see the module doc).
      objects: list of object Files from cuda_compile.
      deps: list of targets providing CcInfo (headers and libraries).

    Returns:
      (CcInfo, static library File).
    """
    cc_toolchain = find_cpp_toolchain(ctx)
    feature_configuration = cc_common.configure_features(
        ctx = ctx,
        cc_toolchain = cc_toolchain,
        requested_features = ctx.features,
        unsupported_features = ctx.disabled_features,
    )
    dep_infos = [d[CcInfo] for d in deps]
    linking_context, linking_outputs = cc_common.create_linking_context_from_compilation_outputs(
        actions = ctx.actions,
        feature_configuration = feature_configuration,
        cc_toolchain = cc_toolchain,
        # nvcc compiled with -fPIC: the same objects serve both link modes.
        compilation_outputs = cc_common.create_compilation_outputs(
            objects = depset(objects),
            pic_objects = depset(objects),
        ),
        linking_contexts = [i.linking_context for i in dep_infos],
        name = ctx.label.name,
        # A static archive only; the objects get linked into the final binary.
        disallow_dynamic_library = True,
    )
    lib = linking_outputs.library_to_link
    archive = lib.pic_static_library or lib.static_library
    return cc_common.merge_cc_infos(cc_infos = [CcInfo(linking_context = linking_context)] + dep_infos), archive
