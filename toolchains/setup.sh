#!/usr/bin/env bash
# Installs what EdgeKernelBench needs to build and test on a Debian (bookworm or later) machine:
# the cross toolchain (clang-19, lld, aarch64 gcc and libc for linking), qemu-user to run aarch64
# binaries, PoCL for the OpenCL target, numpy for the benchmark and the .npy tests, the Rust
# targets and components the workspace builds for, and (optional, Python) onnx and onnxruntime
# for the ONNX tests and external-engine baselines.
#
# With --baselines it also installs the other engines of `ekb baseline` (Python, from PyPI):
# Apache TVM with what MetaSchedule tuning needs, and MNN. CI passes it (their tests run there).
#
# Idempotent: it checks first and installs only what is missing, printing one line per thing it
# installs; when everything is already there it prints nothing and exits 0. It uses sudo only when
# not run as root.
set -euo pipefail

baselines=0
for arg in "$@"; do
    case "$arg" in
        --baselines) baselines=1 ;;
        *)
            echo "setup.sh: unknown option \`$arg\` (known: --baselines)" >&2
            exit 2
            ;;
    esac
done

# Debian packages: the compilers and linkers, the aarch64 sysroot, qemu-user, OpenCL (PoCL, the
# ICD loader and headers, clinfo), the OpenSSH server the ssh transport's tests start on
# loopback, Chromium, whose headless mode renders the HTML report in its test, Redis, the broker
# of `ekb eval --queue` whose tests start one on loopback, and LAVA's common library, whose schema
# validator checks the jobs `ekb pack --lava` writes.
DEB_PACKAGES=(
    clang-19
    lld-19
    lld
    qemu-user
    gcc-aarch64-linux-gnu
    libc6-dev-arm64-cross
    pocl-opencl-icd
    ocl-icd-opencl-dev
    clinfo
    openssh-server
    chromium
    redis-server
    lava-common
)
RUST_TARGETS=(aarch64-unknown-linux-gnu x86_64-unknown-linux-musl aarch64-unknown-linux-musl)
RUST_COMPONENTS=(rustfmt clippy)

if [[ $(id -u) -eq 0 ]]; then
    SUDO=()
else
    SUDO=(sudo)
fi

# Runs a command quietly; on failure shows its output and stops.
quiet() {
    local log
    log=$(mktemp)
    if ! "$@" >"$log" 2>&1; then
        cat "$log" >&2
        rm -f "$log"
        echo "setup.sh: failed: $*" >&2
        exit 1
    fi
    rm -f "$log"
}

# --- Debian packages -------------------------------------------------------------------------
deb_installed() {
    [[ $(dpkg-query -W -f='${Status}' "$1" 2>/dev/null) == "install ok installed" ]]
}

missing_debs=()
for p in "${DEB_PACKAGES[@]}"; do
    deb_installed "$p" || missing_debs+=("$p")
done

numpy_via_pip=0
if ! python3 -c 'import numpy' >/dev/null 2>&1; then
    # Debian's python3-numpy only helps when `python3` is Debian's own interpreter.
    if [[ $(command -v python3 || true) == /usr/bin/python3 ]]; then
        deb_installed python3-numpy || missing_debs+=(python3-numpy)
    else
        numpy_via_pip=1
    fi
fi

if ((${#missing_debs[@]} > 0)); then
    quiet "${SUDO[@]}" apt-get update
    for p in "${missing_debs[@]}"; do
        echo "installing Debian package $p"
    done
    quiet "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y --no-install-recommends "${missing_debs[@]}"
fi

if ((numpy_via_pip)); then
    echo "installing numpy (python3 -m pip)"
    quiet python3 -m pip install --quiet numpy
fi

# --- Optional Python: external-engine baselines ----------------------------------------------
# The core never needs these. The ONNX tests (host/onnx: onnxruntime as an independent oracle for
# the operator semantics) and `ekb baseline --engine onnxruntime` do, so CI installs them here:
# onnx and onnxruntime from PyPI, each only when it does not import already. onnx is the version
# whose node test cases host/onnx/tests/conformance/table.md records (another version has other
# cases: the conformance test names both versions).
py_missing=()
python3 -c 'import onnx' >/dev/null 2>&1 || py_missing+=(onnx==1.23.2)
python3 -c 'import onnxruntime' >/dev/null 2>&1 || py_missing+=(onnxruntime)
if ((${#py_missing[@]} > 0)); then
    echo "installing ${py_missing[*]} (python3 -m pip; optional: ONNX tests and baselines)"
    quiet python3 -m pip install --quiet "${py_missing[@]}"
fi

# --- Optional Python: TVM and MNN baselines (--baselines) ------------------------------------
# `ekb baseline --engine tvm|mnn` and host/onnx/tests/baseline_engines.rs. The pins are the ones
# `ekb` names in its error for a missing package (host/onnx/src/python.rs; a test keeps the two
# equal). apache-tvm 0.27 needs apache-tvm-ffi 0.1.14.post0: with the 0.1.15 pip would pick,
# MetaSchedule crashes when it serialises IR. MetaSchedule also needs xgboost (its cost model;
# xgboost-cpu is the same module without the CUDA libraries), cloudpickle, psutil and tornado.
# Each requirement is installed only when its version or module is not there already.
if ((baselines)); then
    mapfile -t baseline_missing < <(python3 - <<'PY'
import importlib, importlib.metadata as md

def version(dist):
    try:
        return md.version(dist)
    except md.PackageNotFoundError:
        return None

for dist, want in [("apache-tvm", "0.27.0.post1"), ("apache-tvm-ffi", "0.1.14.post0"), ("MNN", "3.6.1")]:
    if version(dist) != want:
        print(f"{dist}=={want}")
for module, dist in [("xgboost", "xgboost-cpu"), ("cloudpickle", "cloudpickle"), ("psutil", "psutil"), ("tornado", "tornado")]:
    try:
        importlib.import_module(module)
    except ImportError:
        print(dist)
PY
    )
    if ((${#baseline_missing[@]} > 0)); then
        echo "installing ${baseline_missing[*]} (python3 -m pip; optional: TVM and MNN baselines)"
        quiet python3 -m pip install --quiet "${baseline_missing[@]}"
    fi
fi

# --- Rust targets and components -------------------------------------------------------------
if ! command -v rustup >/dev/null 2>&1; then
    echo "setup.sh: rustup not found; install Rust with rustup first (https://rustup.rs)" >&2
    exit 1
fi

installed_targets=$(rustup target list --installed)
for t in "${RUST_TARGETS[@]}"; do
    if ! grep -qx "$t" <<<"$installed_targets"; then
        echo "installing Rust target $t"
        quiet rustup target add "$t"
    fi
done

installed_components=$(rustup component list --installed)
for c in "${RUST_COMPONENTS[@]}"; do
    if ! grep -q "^$c-" <<<"$installed_components"; then
        echo "installing Rust component $c"
        quiet rustup component add "$c"
    fi
done
