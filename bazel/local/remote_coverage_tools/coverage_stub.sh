#!/bin/sh
# Stub coverage merger: creates the requested --output_file, empty.
for arg in "$@"; do
  case "$arg" in
    --output_file=*) : > "${arg#--output_file=}" ;;
  esac
done
