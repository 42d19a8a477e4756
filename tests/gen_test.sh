#!/bin/bash
# gen_test.sh: the generator's engine and command line, in TAP.
#  - every arch from sm_70 to sm_90 has elementwise code; bf16 starts at sm_80
#  - a variant whose code is that of an older arch of its major version is
#    merged into it (SASS for both); sm_90a never is
#  - output is byte-for-byte deterministic (two renders, compared)
#  - compile groups hold every variant once, headers hoisted, #line kept
#  - errors name the template file and line (Lua run time, Lua syntax, nil ${})
#  - generated code carries #line, so an nvcc error lands on the template line
#  - a failed render leaves no output file behind
#  - generated/ is fresh (else: run `bazel run //gen:update`)
set -u
GEN="${GEN:-gen/gen}"
gen() { "$GEN" --lib gen "$@"; }
[ -n "${NVCC:-}" ] && NVCC="$(readlink -f "$NVCC")"
n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; shift; for l in "$@"; do echo "# $l"; done; }
check() { local what="$1"; shift; if "$@"; then ok "$what"; else notok "$what"; fi; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# gen list: NAME FAMILY OP ACT DTYPE ARCH SASS_ARCHS (comma-separated)
gen list > "$tmp/list" 2> "$tmp/err" || notok "gen list runs" "$(cat "$tmp/err")"
for arch in sm_70 sm_75 sm_80 sm_86 sm_89 sm_90; do
  count=$(awk -v a="$arch" '$3 == "elementwise_fwd" && index("," $7 ",", "," a ",")' "$tmp/list" | wc -l)
  check "gen list has elementwise_fwd code for $arch ($count)" test "$count" -gt 0
done
check "no bf16 variant below sm_80" test -z "$(awk '$5 == "bf16" && $7 ~ /sm_7/' "$tmp/list")"
check "gen list --op gated_bwd --arch sm_86 filters by the archs a variant has SASS for" \
  test "$(gen list --op gated_bwd --arch sm_86 | awk '{print $3 "/" $7}' | sort -u)" = "gated_bwd/sm_80,sm_86,sm_89"
check "a norm variant of sm_86 and sm_89 is the sm_80 one, with their SASS" \
  grep -q '^rmsnorm_fwd_h4096_bf16_sm80 norm rmsnorm_fwd none bf16 sm_80 sm_80,sm_86,sm_89$' "$tmp/list"
check "an attention variant of sm_86, whose code differs from sm_80's, stays its own" \
  grep -q '^attention_fwd_h128_bf16_sm86 attention attention_fwd none bf16 sm_86 sm_86,sm_89$' "$tmp/list"
check "arch-specific code (sm_90a) is never merged" \
  test -z "$(awk '$6 == "sm_90a" && $7 != "sm_90a"' "$tmp/list")"

mkdir -p "$tmp/ga" "$tmp/gb"
gen groups --out "$tmp/ga" && gen groups --out "$tmp/gb"
check "two renders of every compile group are identical" diff -r "$tmp/ga" "$tmp/gb"
cat "$tmp"/ga/*.cu | sed -n 's/^namespace kiln_\([a-z0-9_]*\) {$/\1/p' | sort > "$tmp/grouped"
check "every variant is in exactly one compile group ($(ls "$tmp/ga" | wc -l) groups)" \
  cmp -s "$tmp/grouped" <(awk '{print $1}' "$tmp/list" | sort)
check "a compile group's sources carry #line into the template" \
  grep -q '^#line [0-9]* "templates/norm.cu.tmpl"' "$tmp/ga/rmsnorm_fwd_sm80_86_89.cu"
check "a compile group includes each header once, outside the variants' namespaces" \
  test "$(grep -c '^#include "runtime/kernels/common.cuh"' "$tmp/ga/rmsnorm_fwd_sm80_86_89.cu")" -eq 1

mkdir -p "$tmp/a" "$tmp/b"
gen render --out "$tmp/a" && gen render --out "$tmp/b"
check "two renders of every variant are identical" diff -r "$tmp/a" "$tmp/b"
check "one .cu per variant ($(wc -l < "$tmp/list"))" test "$(ls "$tmp/a" | wc -l)" -eq "$(wc -l < "$tmp/list")"
check "rendered sources carry #line into the template" \
  grep -q '^#line [0-9]* "templates/elementwise.cu.tmpl"' "$tmp/a/elementwise_fwd_gelu_tanh_bf16_sm80.cu"

expect_error() { # what template line-text
  local what="$1" tmpl="$2" want="$3"
  if gen template "$tmpl" --out "$tmp/out.cu" 2> "$tmp/err"; then
    notok "$what: fails" "gen succeeded"
  elif grep -q -- "$want" "$tmp/err"; then
    ok "$what: $(head -c 200 "$tmp/err")"
  else
    notok "$what: message names $want" "$(cat "$tmp/err")"
  fi
  check "$what: no output file is left behind" test ! -e "$tmp/out.cu" -a ! -e "$tmp/out.cu.tmp"
}
expect_error "a Lua run-time error" tests/fixtures/bad_code.tmpl "tests/fixtures/bad_code.tmpl:4:"
expect_error "a Lua syntax error" tests/fixtures/bad_syntax.tmpl "tests/fixtures/bad_syntax.tmpl:3:"
expect_error "a nil substitution" tests/fixtures/nil_subst.tmpl 'tests/fixtures/nil_subst.tmpl:5:.*missing'

gen template tests/fixtures/good.tmpl --out "$tmp/good.c" count=3 who=kiln
check "substitutions and loops render" grep -q '^int v3 = 6;$' "$tmp/good.c"
check "the text after a loop says where it came from" grep -q '^#line 5 "tests/fixtures/good.tmpl"$' "$tmp/good.c"

if [ -x "${NVCC:-}" ] || NVCC=$(command -v nvcc); command -v "${NVCC:-nvcc}" > /dev/null; then
  gen template tests/fixtures/cuda_error.tmpl --out "$tmp/cuda_error.cu" count=2
  if "${NVCC:-nvcc}" -c "$tmp/cuda_error.cu" -o "$tmp/cuda_error.o" 2> "$tmp/nvcc.err"; then
    notok "nvcc rejects the fixture" "it compiled"
  else
    check "an nvcc error lands on the template line: $(grep -m1 error "$tmp/nvcc.err")" \
      grep -q 'tests/fixtures/cuda_error.tmpl(7)' "$tmp/nvcc.err"
  fi
else
  n=$((n + 1)); echo "ok $n - nvcc error lands on the template line # SKIP no nvcc on PATH"
fi

if gen check generated > "$tmp/out" 2>&1; then
  ok "generated/ is fresh"
else
  notok "generated/ is fresh" "$(cat "$tmp/out")"
fi

echo "1..$n"
exit $((failed > 0))
