#!/bin/sh
# Rewrites generated/ (the variant list Bazel reads and VARIANTS.md) from
# gen/variants.lua. Run as `bazel run //gen:update`.
set -eu
root="${BUILD_WORKSPACE_DIRECTORY:?run me with bazel run //gen:update}"
exec gen/gen --lib "$root/gen" --root "$root" generated --out "$root/generated"
