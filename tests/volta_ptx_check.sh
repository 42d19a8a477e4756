#!/bin/bash
# volta_ptx_check.sh: the sm_70 variants are legal Volta code (TAP).
#
# CUDA 13 cannot target sm_70, so the build compiles sm_70 variants to
# compute_75 PTX (runnable on newer GPUs, not on Volta). This check renders
# the compile groups of the sm_70 variants (every one of them, as the build
# compiles them), compiles each to PTX with the build's flags, retargets the
# PTX to sm_70 (the .target line, and the ISA version down to 8.8, the last
# that CUDA 12.9 reads) and assembles it with CUDA 12.9's ptxas for sm_70.
# Any instruction Volta lacks fails the assembly.
#
#   tests/volta_ptx_check.sh PTXAS_12_9 [GEN]
#   (.ci/run fetches that ptxas from PyPI: nvidia-cuda-nvcc-cu12==12.9.86)
set -u
ptxas="${1:?usage: volta_ptx_check.sh PTXAS_12_9 [GEN]}"
gen="${2:-bazel-bin/gen/gen}"
nvcc="${NVCC:-nvcc}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$ptxas" --version | grep -q "release 12.9" || { echo "Bail out! $ptxas is not CUDA 12.9's ptxas"; exit 1; }
"$gen" --lib gen groups --arch sm_70 --out "$tmp" || { echo "Bail out! gen groups failed"; exit 1; }
check_one() {
  local cu="$1" name ptx
  name="$(basename "$cu" .cu)"
  ptx="${cu%.cu}.ptx"
  if ! "$nvcc" -ptx -O3 -std=c++17 --expt-relaxed-constexpr -I. -arch=compute_75 "$cu" -o "$ptx" 2> "$ptx.err"; then
    echo "not ok - $name: nvcc -ptx failed: $(head -c 300 "$ptx.err")"
    return
  fi
  sed -i -e 's/^\.target sm_75/.target sm_70/' -e 's/^\.version 9\.[0-9]*/.version 8.8/' "$ptx"
  if "$ptxas" -arch=sm_70 "$ptx" -o "${cu%.cu}.cubin" 2> "$ptx.err"; then
    echo "ok - $name assembles for sm_70 with CUDA 12.9 ptxas"
  else
    echo "not ok - $name: $(head -c 300 "$ptx.err")"
  fi
}
export -f check_one
export nvcc ptxas
ls "$tmp"/*.cu | xargs -P "$(nproc)" -I{} bash -c 'check_one {}' > "$tmp/results"
n=0
failed=0
while IFS= read -r line; do
  n=$((n + 1))
  case "$line" in "not ok"*) failed=$((failed + 1)); echo "not ok $n ${line#not ok - }" ;; *) echo "ok $n ${line#ok - }" ;; esac
done < <(sort -k3 "$tmp/results")
# Negative control: Turing's ldmatrix must be refused, or this check could
# not fail.
cp tests/fixtures/turing_only.cu "$tmp/control.cu"
n=$((n + 1))
case "$(check_one "$tmp/control.cu")" in
  "not ok"*"nvcc -ptx failed"*) failed=$((failed + 1)); echo "not ok $n negative control did not compile" ;;
  "not ok"*) echo "ok $n negative control: ldmatrix (sm_75) is refused for sm_70" ;;
  *) failed=$((failed + 1)); echo "not ok $n negative control: ldmatrix assembled for sm_70" ;;
esac
echo "1..$n"
[ "$n" -gt 1 ] || { echo "# no sm_70 compile groups rendered"; exit 1; }
exit $((failed > 0))
