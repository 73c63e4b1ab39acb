#!/usr/bin/env python3
"""Writes the small seed inputs of fuzz/seeds/params/ and fuzz/seeds/metadata/
(the .npy target is seeded from tests/runtime/data and tests/run/data).

Each seed shows the fuzzer one form the format allows that the repository's
own files do not: every dtype (bfloat16 and bool included), 0-d and empty
tensors, high ranks, odd names, attrs objects of every value kind, the
StrMap layout, shared blobs, repr_b64 strings. They are checked in; run this
again only to change them. Standard library only; reuses the blob writer of
tests/tools/make_params.py.

    python3 fuzz/make_seeds.py
"""

import base64
import json
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "tools"))
from make_params import NDARRAY_MAGIC, ndarray_blob, params_file  # noqa: E402


def raw_blob(code, bits, shape, data):
    """A blob with any dtype code (bfloat16 is code 4) and raw element bytes."""
    head = struct.pack("<QQiiiBBH", NDARRAY_MAGIC, 0, 1, 0, len(shape), code, bits, 1)
    head += struct.pack("<%dq" % len(shape), *shape)
    return head + struct.pack("<q", len(data)) + data


def b64(blob):
    return base64.b64encode(blob).decode("ascii")


PARAMS = {
    "empty.params": [],
    "dtypes.params": [
        ("b", "bool", (), [1]),
        ("conv.weight", "int8", (3,), [-128, 0, 127]),
        ("u16", "uint16", (2, 2), [0, 1, 65535, 7]),
        ("i64", "int64", (1,), [-(2 ** 63)]),
        ("half", "float16", (2,), [0.5, -2.0]),
        ("f64", "float64", (), [1e300]),
        ("", "uint8", (0, 3), []),
        ("x" * 40, "float32", (1, 1, 2, 1, 1, 1), [1.0, -0.0]),
    ],
}


def attrs_section():
    """Attrs objects (Conv2DAttrs, ReshapeAttrs, PadAttrs, a tir.Var in a
    shape) next to constants, two of which share one blob."""
    nodes = [
        {"type_key": ""},                                                       # 0
        {"type_key": "Map",
         "keys": ["relay.Constant", "relay.attrs.Conv2DAttrs", "relay.attrs.ReshapeAttrs",
                  "relay.attrs.PadAttrs", "tir.Var"],
         "data": [2, 3, 4, 5, 6]},                                              # 1
        {"type_key": "Array", "data": [7, 8, 9]},                               # 2
        {"type_key": "Array", "data": [10]},                                    # 3
        {"type_key": "Array", "data": [11]},                                    # 4
        {"type_key": "Array", "data": [12]},                                    # 5
        {"type_key": "Array", "data": [13]},                                    # 6
        {"type_key": "relay.Constant", "attrs": {"_checked_type_": "0", "data": "0", "span": "0",
                                                 "virtual_device_": "0"}},      # 7
        {"type_key": "relay.Constant", "attrs": {"data": "1"}},                 # 8
        {"type_key": "relay.Constant", "attrs": {"data": "0"}},                 # 9
        {"type_key": "relay.attrs.Conv2DAttrs",
         "attrs": {"strides": "14", "padding": "15", "dilation": "14", "groups": "1",
                   "channels": "16", "kernel_size": "14", "data_layout": "17",
                   "kernel_layout": "OIHW", "out_layout": "18", "out_dtype": "float32"}},  # 10
        {"type_key": "relay.attrs.ReshapeAttrs", "attrs": {"newshape": "19", "allowzero": "0"}},  # 11
        {"type_key": "relay.attrs.PadAttrs", "attrs": {"pad_width": "20", "pad_mode": "reflect"}},  # 12
        {"type_key": "tir.Var", "attrs": {"dtype": "int64", "name": "n"}},      # 13
        {"type_key": "Array", "data": [21, 21]},                                # 14
        {"type_key": "Array", "data": [22, 22, 21, 21]},                        # 15
        {"type_key": "IntImm", "attrs": {"dtype": "int32", "value": "64"}},     # 16
        {"type_key": "runtime.String", "repr_str": "NCHW"},                     # 17
        {"type_key": "runtime.String", "repr_b64": b64(b"NCHW16c")},            # 18
        {"type_key": "Array", "data": [21, 13, 23]},                            # 19
        {"type_key": "Array", "data": [14, 14]},                                # 20
        {"type_key": "IntImm", "attrs": {"dtype": "int64", "value": "1"}},      # 21
        {"type_key": "IntImm", "attrs": {"dtype": "int32", "value": "0"}},      # 22
        {"type_key": "FloatImm", "attrs": {"dtype": "float32", "value": "-1"}},  # 23
    ]
    arrays = [
        raw_blob(4, 16, (2,), struct.pack("<2H", 0x3F80, 0xC000)),  # bfloat16 1, -2
        ndarray_blob("float16", (2, 1), [0.25, 65504.0]),
    ]
    return {"root": 1, "nodes": nodes, "b64ndarrays": [b64(a) for a in arrays],
            "attrs": {"tvm_version": "0.16.0"}}


def strmap_section():
    """The older layout: root StrMap whose "data" alternates runtime.String
    key nodes and value nodes; no b64ndarrays."""
    nodes = [
        {"type_key": ""},
        {"type_key": "StrMap", "data": [2, 3]},
        {"type_key": "runtime.String", "repr_str": "relay.attrs.ConcatenateAttrs"},
        {"type_key": "Array", "data": [4]},
        {"type_key": "relay.attrs.ConcatenateAttrs", "attrs": {"axis": "-1"}},
    ]
    return {"root": 1, "nodes": nodes}


def corpus_section():
    """The metadata section of tests/corpus/metadata_consts.relay."""
    path = os.path.join(HERE, "..", "tests", "corpus", "metadata_consts.relay")
    with open(path) as f:
        text = f.read()
    return text[text.index("#[metadata]") + len("#[metadata]"):].lstrip("\n")


def main():
    pdir = os.path.join(HERE, "seeds", "params")
    mdir = os.path.join(HERE, "seeds", "metadata")
    os.makedirs(pdir, exist_ok=True)
    os.makedirs(mdir, exist_ok=True)
    for name, entries in PARAMS.items():
        with open(os.path.join(pdir, name), "wb") as f:
            f.write(params_file(entries))
    with open(os.path.join(pdir, "bfloat16.params"), "wb") as f:
        blob = raw_blob(4, 16, (3,), struct.pack("<3H", 0x3F80, 0x7F80, 0x0001))
        f.write(struct.pack("<QQQ", 0xF7E58D4F05049CB7, 0, 1) + struct.pack("<Q", 2) + b"bf"
                + struct.pack("<Q", 1) + blob)
    blob64 = b64(ndarray_blob("int32", (2,), [1, -1]))
    seeds = {
        "consts.json": corpus_section(),
        "attrs.json": json.dumps(attrs_section(), indent=1) + "\n",
        "strmap.json": json.dumps(strmap_section()) + "\n",
        "empty.json": '{"root": 1, "nodes": [{"type_key": ""}, {"type_key": "Map"}], "b64ndarrays": [], '
                      '"attrs": {"tvm_version": "0.16.0"}}\n',
        # The base64 decoder alone: a blob broken over lines.
        "base64.txt": "\n".join(blob64[i:i + 16] for i in range(0, len(blob64), 16)) + "\n",
    }
    for name, text in seeds.items():
        with open(os.path.join(mdir, name), "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
