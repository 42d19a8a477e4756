/*
 * kiln_variants: prints the selection table of this build, one variant per
 * line: name, arch, the code it carries (SASS / PTX), and, when a GPU that
 * runs it is present, its registers and static shared memory.
 *
 *   bazel run //runtime:kiln_variants [-- FILTER]
 */
#include <stdio.h>
#include <string.h>

#include "runtime/kiln.h"

int main(int argc, char **argv)
{
    const char *filter = argc > 1 ? argv[1] : NULL;
    printf("%-44s %-6s %-16s %5s %8s\n", "variant", "arch", "code", "regs", "smem");
    int shown = 0;
    for (int i = 0; i < kiln_variant_count(); i++) {
        kiln_variant_info v;
        if (kiln_variant_get(i, &v) != KILN_STATUS_SUCCESS) {
            fprintf(stderr, "kiln_variant_get(%d): %s\n", i, kiln_last_error());
            return 1;
        }
        if (filter && !strstr(v.name, filter)) continue;
        char code[32], regs[16] = "-", smem[16] = "-";
        if (v.sass_arch && v.ptx_arch) snprintf(code, sizeof code, "sm_%d+ptx_%d", v.sass_arch, v.ptx_arch);
        else if (v.sass_arch) snprintf(code, sizeof code, "sm_%d", v.sass_arch);
        else snprintf(code, sizeof code, "ptx_%d", v.ptx_arch);
        int r = 0, s = 0;
        if (kiln_variant_resources(i, &r, &s) == KILN_STATUS_SUCCESS) {
            snprintf(regs, sizeof regs, "%d", r);
            snprintf(smem, sizeof smem, "%d", s + v.smem_bytes);
        }
        printf("%-44s sm_%-3d %-16s %5s %8s\n", v.name, v.arch, code, regs, smem);
        shown++;
    }
    printf("%d of %d variants\n", shown, kiln_variant_count());
    return 0;
}
