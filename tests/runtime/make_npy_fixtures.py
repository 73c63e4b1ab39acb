#!/usr/bin/python3
"""Writes the .npy fixtures of test_runtime.c into tests/runtime/data/.

Run from the repository root with a Python that has NumPy (the fixtures in
git were made with NumPy 1.24): /usr/bin/python3 tests/runtime/make_npy_fixtures.py

Every array holds the values test_runtime.c expects (see VALUES there):
for each dtype, six values in a (2, 3) array. Files:
  dt_<dtype>.npy        C order, little-endian, format 1.0 (np.save)
  be_<dtype>.npy        the same values, big-endian
  fortran_<dtype>.npy   np.arange(24).reshape(2, 3, 4) in Fortran order
                        (bool: arange % 3 == 0)
  v2_float32.npy, v3_float32.npy   dt_float32's array in format 2.0, 3.0
  scalar_float64.npy    a 0-d array holding 2.5
  empty_float32.npy     shape (0,); empty_int64_2x0x3.npy shape (2, 0, 3)
  vec_int32.npy         shape (5,): 10, 20, 30, 40, 50
"""
import os

import numpy as np
from numpy.lib import format as npformat

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")

VALUES = {
    "bool": [True, False, True, True, False, False],
    "int8": [0, 1, -1, 100, -128, 127],
    "int16": [0, 1, -1, 1000, -32768, 32767],
    "int32": [0, 1, -1, 100000, -2**31, 2**31 - 1],
    "int64": [0, 1, -1, 10**12, -2**63, 2**63 - 1],
    "uint8": [0, 1, 2, 100, 254, 255],
    "uint16": [0, 1, 2, 1000, 65534, 65535],
    "uint32": [0, 1, 2, 100000, 2**32 - 2, 2**32 - 1],
    "uint64": [0, 1, 2, 10**12, 2**64 - 2, 2**64 - 1],
    "float16": [0.0, 1.5, -2.25, 65504.0, 2.0**-14, -0.0],
    "float32": [0.0, 1.5, -2.25, 1e30, 2.0**-126, -0.0],
    "float64": [0.0, 1.5, -2.25, 1e300, 2.0**-1022, -0.0],
}


def save(name, arr):
    np.save(os.path.join(OUT, name), arr)


def write(name, arr, version):
    with open(os.path.join(OUT, name), "wb") as f:
        npformat.write_array(f, arr, version=version)


def main():
    os.makedirs(OUT, exist_ok=True)
    for dt, vals in VALUES.items():
        a = np.array(vals, dtype=dt).reshape(2, 3)
        save("dt_%s.npy" % dt, a)
        if a.dtype.itemsize > 1:
            save("be_%s.npy" % dt, a.astype(a.dtype.newbyteorder(">")))
    ar = np.arange(24).reshape(2, 3, 4)
    for dt in ("float32", "int16", "uint8", "float64"):
        f = np.asfortranarray(ar.astype(dt))
        assert f.flags.f_contiguous and not f.flags.c_contiguous
        save("fortran_%s.npy" % dt, f)
    save("fortran_bool.npy", np.asfortranarray(ar % 3 == 0))
    f32 = np.array(VALUES["float32"], dtype="float32").reshape(2, 3)
    write("v2_float32.npy", f32, (2, 0))
    write("v3_float32.npy", f32, (3, 0))
    save("scalar_float64.npy", np.array(2.5))
    save("empty_float32.npy", np.zeros((0,), dtype="float32"))
    save("empty_int64_2x0x3.npy", np.zeros((2, 0, 3), dtype="int64"))
    save("vec_int32.npy", np.array([10, 20, 30, 40, 50], dtype="int32"))


if __name__ == "__main__":
    main()
