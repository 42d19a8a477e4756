#!/bin/sh
# Installs kiln for C apps outside Bazel: PREFIX/lib/libkiln.so,
# PREFIX/include/kiln.h and PREFIX/lib/pkgconfig/kiln.pc (which also names
# the toolkit's cudart, for the app's own CUDA calls), so that
#   PKG_CONFIG_PATH=PREFIX/lib/pkgconfig cc app.c $(pkg-config --cflags --libs kiln)
# builds and links. Run as `bazel run //runtime:install -- PREFIX`.
set -eu
prefix="${1:?usage: bazel run //runtime:install -- PREFIX}"
cuda="${CUDA_PATH:-/usr/local/cuda}"
case "$prefix" in /*) ;; *) prefix="${BUILD_WORKING_DIRECTORY:-$PWD}/$prefix" ;; esac
mkdir -p "$prefix/lib/pkgconfig" "$prefix/include"
install -m 0755 runtime/shared/libkiln.so "$prefix/lib/libkiln.so"
install -m 0644 runtime/kiln.h "$prefix/include/kiln.h"
cat > "$prefix/lib/pkgconfig/kiln.pc" <<PC
prefix=$prefix
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: kiln
Description: Specialized CUDA kernels generated at build time
Version: 0.1.0
Cflags: -I\${includedir} -I$cuda/include
Libs: -L\${libdir} -Wl,-rpath,\${libdir} -lkiln -L$cuda/lib64 -Wl,-rpath,$cuda/lib64 -lcudart
PC
echo "installed kiln into $prefix"
