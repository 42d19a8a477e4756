"""Offline @rules_java stand-in: the names @bazel_tools//tools/jdk loads when
Bazel resolves its registered Java toolchains, forwarded to the native rules.
Nothing here builds Java; kiln has no Java targets."""

def java_binary(**attrs):
    native.java_binary(**attrs)

def java_import(**attrs):
    native.java_import(**attrs)

def java_library(**attrs):
    native.java_library(**attrs)

def java_runtime(**attrs):
    native.java_runtime(**attrs)

def java_toolchain(**attrs):
    native.java_toolchain(**attrs)
