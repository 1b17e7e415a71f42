#!/usr/bin/env bash
# Builds the GPU runtime (ekb-rt with the `opencl` and `cuda` features) for a board whose glibc
# is older than this machine's, and checks the binary asks for no newer glibc symbol.
#
#   device-runtime/rt/gpu-build.sh aarch64 2.31     # e.g. Jetson on JetPack 5 (Ubuntu 20.04)
#   device-runtime/rt/gpu-build.sh x86_64 2.31
#
# Uses cargo-zigbuild's glibc-versioned targets: `pip install ziglang` and
# `cargo install cargo-zigbuild --locked` once. The binary is
# target/<arch>-unknown-linux-gnu/release/ekb-rt; docs/gpu.md has the details.
set -euo pipefail
cd "$(dirname "$0")/../.."

arch=${1:?usage: gpu-build.sh aarch64|x86_64 GLIBC_VERSION}
glibc=${2:?usage: gpu-build.sh aarch64|x86_64 GLIBC_VERSION}
triple="$arch-unknown-linux-gnu"

cargo zigbuild --release -p ekb-rt --features opencl,cuda --target "$triple.$glibc"
bin="target/$triple/release/ekb-rt"

objdump=objdump
if [ "$arch" = aarch64 ] && command -v aarch64-linux-gnu-objdump >/dev/null; then
    objdump=aarch64-linux-gnu-objdump
fi
newest=$("$objdump" -T "$bin" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -1)
echo "$bin: needs glibc $newest at most ($(stat -c %s "$bin") bytes)"
if [ "$(printf '%s\n%s\n' "$newest" "$glibc" | sort -V | tail -1)" != "$glibc" ]; then
    echo "error: $bin needs glibc $newest, newer than $glibc" >&2
    exit 1
fi
