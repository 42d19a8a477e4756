#!/bin/bash
# gpu_suite.sh: the GPU suite on a machine with a GPU and no Bazel.
#
# On the build machine:  bazel build //tests:all //bench:all //runtime:kiln_variants
#                        tests/gpu_suite.sh --pack kiln-gpu.tar.xz   (the binaries, well under 64 MiB)
# On the GPU machine:    tar -xJf kiln-gpu.tar.xz && kiln-gpu/gpu_suite.sh [--sanitize] [FILTER]
#
# Runs every test binary (TAP), then with --sanitize the GPU sweeps under
# compute-sanitizer memcheck, racecheck, initcheck and synccheck; FILTER
# (e.g. "_sm90") limits the variants swept, as KILN_TEST_FILTER does. Prints
# one line "N passed, N failed" counted from the TAP results.
set -u
if [ "${1:-}" = "--pack" ]; then
  # The binaries link kiln statically and so each carries every kernel; xz
  # with a window wider than one binary stores those bytes once.
  out="${2:?usage: gpu_suite.sh --pack FILE.tar.xz}"
  stage="$(mktemp -d)/kiln-gpu"
  mkdir -p "$stage"
  cp -f bazel-bin/tests/elementwise_test bazel-bin/tests/norm_test bazel-bin/tests/softmax_test \
        bazel-bin/tests/attention_test bazel-bin/tests/linear_test bazel-bin/tests/runtime_test \
        bazel-bin/tests/env_variant_test bazel-bin/runtime/kiln_variants bazel-bin/bench/bench_elementwise \
        bazel-bin/bench/bench_norm bazel-bin/bench/bench_attention bazel-bin/bench/bench_linear bench/peers.py tests/gpu_suite.sh "$stage/"
  chmod u+w "$stage"/*
  tar -C "$(dirname "$stage")" -cf - kiln-gpu | xz -T2 --lzma2=preset=6,dict=192MiB > "$out"
  rm -rf "$(dirname "$stage")"
  du -h "$out"
  exit 0
fi
here="$(cd "$(dirname "$0")" && pwd)"
sanitize=0
[ "${1:-}" = "--sanitize" ] && { sanitize=1; shift; }
export KILN_TEST_FILTER="${1:-}"
log="$(mktemp)"
status=0
run() { echo "== $*"; "$@" 2>&1 | tee -a "$log"; [ "${PIPESTATUS[0]}" -eq 0 ] || status=1; }
run "$here/runtime_test"
KILN_VARIANT=no_such_variant run "$here/env_variant_test"
run "$here/elementwise_test"
run "$here/norm_test"
run "$here/softmax_test"
run "$here/attention_test"
run "$here/linear_test"
if [ "$sanitize" = 1 ]; then
  for tool in memcheck racecheck initcheck synccheck; do
    echo "== compute-sanitizer --tool $tool (KILN_TEST_FILTER=$KILN_TEST_FILTER)"
    rc=0
    for t in elementwise_test norm_test softmax_test attention_test linear_test; do
      compute-sanitizer --tool "$tool" --error-exitcode 99 "$here/$t" >> "$log.$tool" 2>&1 || rc=$?
    done
    grep -E "ERROR SUMMARY|^not ok|^# [0-9]+ (passed|of)" "$log.$tool"
    cat "$log.$tool" >> "$log"
    if [ "$rc" -ne 0 ]; then status=1; echo "not ok - compute-sanitizer $tool exit $rc"; fi
  done
fi
passed=$(grep -cE '^ok ' "$log")
failed=$(grep -cE '^not ok ' "$log")
echo "$passed passed, $failed failed"
exit $status
