#!/usr/bin/env python3
"""An independent reimplementation of the seeded generator (docs/seeded-inputs.md), in plain
Python (integers and IEEE-754 doubles; `struct` rounds to f32), used to check that the Rust
generator follows the written specification bit for bit.

Reads cases from stdin, one per line:

    TASK SEED TENSOR DTYPE SHAPE INIT ARGS...

SHAPE is comma-separated dimensions (`-` for a scalar); INIT and ARGS are one of
`uniform LO HI`, `normal MEAN STD`, `const V` (floats as the hex of their f64 bits),
`kaiming_uniform`, `randint LO HI` (decimal integers). For each case it prints one line: the
key in hex, then every element's bits in hex (f32 bits, or i32 as two's-complement u32), or
`error` where the initialiser does not fit the tensor.
"""

import math
import struct
import sys

MASK64 = (1 << 64) - 1
FNV_OFFSET = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3
GAMMA = 0x9E3779B97F4A7C15
F32_MAX = struct.unpack("<f", struct.pack("<I", 0x7F7FFFFF))[0]


def mix64(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


def tensor_key(task, seed, tensor):
    h = FNV_OFFSET
    t, n = task.encode(), tensor.encode()
    data = len(t).to_bytes(8, "little") + t + seed.to_bytes(8, "little")
    data += len(n).to_bytes(8, "little") + n
    for b in data:
        h = ((h ^ b) * FNV_PRIME) & MASK64
    return mix64(h)


class SplitMix64:
    def __init__(self, key):
        self.state = key

    def next_u64(self):
        self.state = (self.state + GAMMA) & MASK64
        return mix64(self.state)

    def next_u24(self):
        return self.next_u64() >> 40


def f32_bits(x):
    """Rounds a double to the nearest f32 (ties to even) and returns its bits; raises
    OverflowError for a finite double that rounds beyond the f32 range."""
    return struct.unpack("<I", struct.pack("<f", x))[0]


def uniform(rng, lo, hi, count):
    width = hi - lo
    return [f32_bits(lo + width * (rng.next_u24() * 2.0**-24)) for _ in range(count)]


def fill(init, args, dtype, shape, key):
    count = math.prod(shape)
    rng = SplitMix64(key)
    if dtype == "f32":
        if init == "uniform":
            lo, hi = args
            if not (lo < hi and lo >= -F32_MAX and hi <= F32_MAX):
                return None
            return uniform(rng, lo, hi, count)
        if init == "normal":
            mean, std = args
            if not (math.isfinite(mean) and math.isfinite(std) and std >= 0
                    and abs(mean) + 6.0 * std <= F32_MAX):
                return None
            out = []
            for _ in range(count):
                s = sum(rng.next_u24() for _ in range(12))
                z = (s + 6) * 2.0**-24 - 6.0
                out.append(f32_bits(mean + std * z))
            return out
        if init == "kaiming_uniform":
            if len(shape) < 2 or math.prod(shape[1:]) == 0:
                return None
            b = math.isqrt((1 << 104) // math.prod(shape[1:])) / 2.0**52
            return uniform(rng, -b, b, count)
        if init == "const":
            (v,) = args
            if math.isnan(v):
                return [0x7FC00000] * count
            try:
                return [f32_bits(v)] * count
            except OverflowError:
                return None
        return None
    if init == "randint":
        lo, hi = args
        if not (lo < hi and lo >= -(2**31) and hi <= 2**31):
            return None
        n = hi - lo
        out = []
        for _ in range(count):
            m = rng.next_u64() * n
            if (m & MASK64) < n:
                threshold = (2**64 - n) % n
                while (m & MASK64) < threshold:
                    m = rng.next_u64() * n
            out.append((lo + (m >> 64)) & 0xFFFFFFFF)
        return out
    if init == "const":
        (v,) = args
        if not (math.isfinite(v) and v == int(v) and -(2**31) <= v < 2**31):
            return None
        return [int(v) & 0xFFFFFFFF] * count
    return None


def f64_of_hex(h):
    return struct.unpack("<d", int(h, 16).to_bytes(8, "little"))[0]


def main():
    for line in sys.stdin:
        parts = line.split()
        if not parts:
            continue
        task, seed, tensor, dtype, shape, init, *rest = parts
        shape = [] if shape == "-" else [int(d) for d in shape.split(",")]
        if init == "randint":
            args = [int(a) for a in rest]
        else:
            args = [f64_of_hex(a) for a in rest]
        key = tensor_key(task, int(seed), tensor)
        out = fill(init, args, dtype, shape, key)
        body = "error" if out is None else " ".join(f"{x:08x}" for x in out)
        print(f"{key:016x} {body}".rstrip())


if __name__ == "__main__":
    main()
