#!/usr/bin/env python3
"""Writes tests/corpus/params_model.params: the weights of the small MLP in
tests/corpus/params_model.relay, in TVM's .params layout (spec 6.5):

    u64 magic 0xF7E58D4F05049CB7, u64 reserved 0,
    u64 count, count x (u64 length, name bytes),
    u64 count, count x NDArray blob (spec 6.3)

Values are simple closed forms, exact in float32, so tests can check them.
Standard library only.

    python3 tests/tools/make_params.py [OUT]   (default: the corpus file)
"""

import os
import struct
import sys

PARAMS_MAGIC = 0xF7E58D4F05049CB7
NDARRAY_MAGIC = 0xDD5E40F096B4A13F

# dtype name -> (code, bits, struct format of one element)
DTYPES = {
    "int8": (0, 8, "b"), "int16": (0, 16, "h"), "int32": (0, 32, "i"), "int64": (0, 64, "q"),
    "uint8": (1, 8, "B"), "uint16": (1, 16, "H"), "uint32": (1, 32, "I"), "uint64": (1, 64, "Q"),
    "bool": (1, 1, "B"), "float16": (2, 16, "e"), "float32": (2, 32, "f"), "float64": (2, 64, "d"),
}


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def ndarray_blob(dtype, shape, values):
    """The NDArray blob of a row-major tensor (little-endian)."""
    code, bits, fmt = DTYPES[dtype]
    assert len(values) == numel(shape), (dtype, shape, len(values))
    data = struct.pack("<%d%s" % (len(values), fmt), *values)
    head = struct.pack("<QQiiiBBH", NDARRAY_MAGIC, 0, 1, 0, len(shape), code, bits, 1)
    head += struct.pack("<%dq" % len(shape), *shape)
    head += struct.pack("<q", len(data))
    return head + data


def params_file(entries):
    """entries: list of (name, dtype, shape, values), kept in order."""
    out = [struct.pack("<QQQ", PARAMS_MAGIC, 0, len(entries))]
    for name, _, _, _ in entries:
        raw = name.encode("utf-8")
        out.append(struct.pack("<Q", len(raw)) + raw)
    out.append(struct.pack("<Q", len(entries)))
    for _, dtype, shape, values in entries:
        out.append(ndarray_blob(dtype, shape, values))
    return b"".join(out)


def ramp(n, period, offset, scale):
    """(i % period - offset) * scale for i in 0..n-1: exact in float32."""
    return [(i % period - offset) * scale for i in range(n)]


# The MLP's weights: name -> (dtype, shape, values).
PARAMS = {
    "fc1.weight": ("float32", (16, 8), ramp(16 * 8, 7, 3, 0.125)),
    "fc1.bias": ("float32", (16,), ramp(16, 5, 2, 0.0625)),
    "fc2.weight": ("float32", (4, 16), ramp(4 * 16, 9, 4, 0.03125)),
    "fc2.bias": ("float32", (4,), [0.5, -0.5, 0.25, -0.25]),
}


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "corpus", "params_model.params")
    entries = [(name, dt, shape, vals) for name, (dt, shape, vals) in PARAMS.items()]
    with open(path, "wb") as f:
        f.write(params_file(entries))


if __name__ == "__main__":
    main()
