#!/bin/bash
# gpu_suite.sh: the GPU suite on a machine with a GPU and no Bazel.
#
# On the build machine:  bazel build //tests:all //bench:all //runtime:kiln_variants //runtime:shared/libkiln.so
#                        tests/gpu_suite.sh --pack kiln-gpu.tar.xz   (the binaries, well under 64 MiB)
# On the GPU machine:    tar -xJf kiln-gpu.tar.xz && kiln-gpu/gpu_suite.sh [--sanitize] [FILTER]
#
# Runs every test binary (TAP) side by side, the long sweeps split into
# shards (KILN_TEST_SHARD=i/n, each shard a process of its own; the GPU is
# shared), each into a log of its own; then prints the logs in a fixed order,
# each under a line with its exit status and wall time. With --sanitize, then
# the GPU sweeps under compute-sanitizer memcheck, racecheck, initcheck and
# synccheck, one after another. FILTER (e.g. "_sm90") limits the variants
# swept, as KILN_TEST_FILTER does. Prints one line "N passed, N failed"
# counted from the TAP results; exits 1 when a binary failed.
# KILN_SUITE_SERIAL=1 runs the binaries one at a time, unsharded.
# KILN_SUITE_LOGS=DIR writes the shards' logs and exit files into DIR and
# keeps them there, so that a run cut by a time limit (the device's per-call
# limit) still leaves the shards that finished, each log as it ran.
set -u
if [ "${1:-}" = "--pack" ]; then
  # The binaries link kiln statically and so each carries every kernel; xz
  # with a window wider than one binary stores those bytes once.
  out="${2:?usage: gpu_suite.sh --pack FILE.tar.xz}"
  stage="$(mktemp -d)/kiln-gpu"
  mkdir -p "$stage"
  cp -f bazel-bin/tests/elementwise_test bazel-bin/tests/norm_test bazel-bin/tests/softmax_test \
        bazel-bin/tests/attention_test bazel-bin/tests/attention_bwd_test bazel-bin/tests/linear_test \
        bazel-bin/tests/runtime_test bazel-bin/tests/env_variant_test bazel-bin/runtime/kiln_variants bazel-bin/bench/bench_elementwise \
        bazel-bin/bench/bench_norm bazel-bin/bench/bench_attention bazel-bin/bench/bench_linear bazel-bin/runtime/shared/libkiln.so bench/peers.py bench/bars.py bench/cycles.py bench/sass_profile.py tests/gpu_suite.sh "$stage/"
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
dir="${KILN_SUITE_LOGS:-$(mktemp -d)}"
mkdir -p "$dir" || exit 1
log="$dir/all.log"
: > "$log"
status=0
ms() { echo $(( $(date +%s%N) / 1000000 )); }
secs() { printf '%d.%d s' $(( $1 / 1000 )) $(( $1 % 1000 / 100 )); }
# The binaries in the order their logs are printed, each with its shards: the
# long sweeps (linear's and attention's references, every arch's PTX through
# the driver's JIT) split so that no one process holds the suite up.
binaries="runtime_test:1 env_variant_test:1 elementwise_test:2 norm_test:3 softmax_test:1 attention_test:4 attention_bwd_test:4 linear_test:4"
[ "${KILN_SUITE_SERIAL:-0}" = 1 ] && binaries="$(echo "$binaries" | sed 's/:[0-9]*/:1/g')"
# start NAME I N: runs shard I of N of NAME, output to $dir/NAME.I.log, then
# "exit-status milliseconds" to $dir/NAME.I.rc.
start() {
  local t=$1 i=$2 n=$3
  (
    t0=$(ms)
    [ "$t" = env_variant_test ] && export KILN_VARIANT=no_such_variant
    [ "$n" -gt 1 ] && export KILN_TEST_SHARD="$i/$n"
    "$here/$t" > "$dir/$t.$i.log" 2>&1
    rc=$?
    echo "$rc $(( $(ms) - t0 ))" > "$dir/$t.$i.rc"
  ) &
  [ "${KILN_SUITE_SERIAL:-0}" = 1 ] && wait
  return 0
}
suite0=$(ms)
for b in $binaries; do
  for ((i = 0; i < ${b#*:}; i++)); do start "${b%:*}" "$i" "${b#*:}"; done
done
wait
for b in $binaries; do
  t=${b%:*} n=${b#*:}
  for ((i = 0; i < n; i++)); do
    read -r rc took < "$dir/$t.$i.rc" || { rc=1 took=0; }
    label=$t
    [ "$n" -gt 1 ] && label="$t (shard $i/$n)"
    echo "== $label: exit $rc, $(secs "$took")"
    cat "$dir/$t.$i.log"
    cat "$dir/$t.$i.log" >> "$log"
    [ "$rc" -eq 0 ] || status=1
  done
done
echo "== wall times (the suite: $(secs $(( $(ms) - suite0 ))))"
for b in $binaries; do
  t=${b%:*} n=${b#*:} line=""
  for ((i = 0; i < n; i++)); do
    read -r rc took < "$dir/$t.$i.rc" || took=0
    line="$line $(secs "$took")"
  done
  echo "#   $t:$line"
done
if [ "$sanitize" = 1 ]; then
  for tool in memcheck racecheck initcheck synccheck; do
    echo "== compute-sanitizer --tool $tool (KILN_TEST_FILTER=$KILN_TEST_FILTER)"
    rc=0
    for t in elementwise_test norm_test softmax_test attention_test attention_bwd_test linear_test; do
      compute-sanitizer --tool "$tool" --error-exitcode 99 "$here/$t" >> "$dir/$tool.log" 2>&1 || rc=$?
    done
    grep -E "ERROR SUMMARY|^not ok|^# [0-9]+ (passed|of)" "$dir/$tool.log"
    cat "$dir/$tool.log" >> "$log"
    if [ "$rc" -ne 0 ]; then status=1; echo "not ok - compute-sanitizer $tool exit $rc"; fi
  done
fi
passed=$(grep -cE '^ok ' "$log")
failed=$(grep -cE '^not ok ' "$log")
[ -n "${KILN_SUITE_LOGS:-}" ] || rm -rf "$dir"
echo "$passed passed, $failed failed"
exit $status
