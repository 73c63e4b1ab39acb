#!/usr/bin/env python3
"""Writes ResNet-50 (v1, NCHW, batch 1, 224x224, 1000 classes) in Relay text
format v0.0.5, laid out the way `mod.astext(show_meta_data=True)` prints an
imported model: one graph binding per call with a `/* ty=... */` comment,
every weight as `meta[relay.Constant][i]`, and a `#[metadata]` section holding
one base64 NDArray blob per weight (about 25.5 million float32 values, a file
of about 135 MB).

The weights are pseudo-random but deterministic for a given --seed, and always
finite: each float32 gets a random sign (where the tensor allows negatives), a
random mantissa and an exponent drawn from a small window chosen per tensor
(convolution and dense weights scaled by their fan-in, batch-norm variances
and scales positive around 1). The bits are produced a whole tensor at a time
with Python integers, so generation takes a few seconds.

Only the Python standard library is used.

    python3 bench/gen_resnet50.py OUT.relay [--seed N]
"""

import argparse
import base64
import math
import random
import struct
import sys
import time

NDARRAY_MAGIC = 0xDD5E40F096B4A13F
TVM_VERSION = "0.16.0"


# {==== Text helpers ====}

def shape_text(shape):
    """TVM prints 1-D shapes without a trailing comma: (64)."""
    return "(" + ", ".join(str(d) for d in shape) + ")"


def tensor_ty(shape, dtype="float32"):
    return "Tensor[%s, %s]" % (shape_text(shape), dtype)


def int_list(xs):
    return "[" + ", ".join(str(x) for x in xs) + "]"


# {==== Weights ====}

class Weight:
    """One meta[relay.Constant] entry: its shape and how to fill it.
    Magnitudes lie in [2**lo, 2**(lo + 2**exp_bits)) with lo aligned down to a
    multiple of 2**exp_bits (in biased-exponent terms)."""

    def __init__(self, shape, log2_scale, exp_bits, signed):
        self.shape = tuple(shape)
        self.log2_scale = log2_scale
        self.exp_bits = exp_bits
        self.signed = signed

    def numel(self):
        n = 1
        for d in self.shape:
            n *= d
        return n


_pattern_cache = {}


def _repeat_u32(word, n):
    key = (word, n)
    v = _pattern_cache.get(key)
    if v is None:
        v = int.from_bytes(struct.pack("<I", word) * n, "little")
        if len(_pattern_cache) > 64:
            _pattern_cache.clear()
        _pattern_cache[key] = v
    return v


def weight_bytes(rng, w):
    """Little-endian float32 data of w, as bytes."""
    n = w.numel()
    span = 1 << w.exp_bits
    # Top of the magnitude window near the requested scale.
    biased = int(round(w.log2_scale)) + 127 - (span - 1)
    biased = max(span, min(biased, 254 - span)) & ~(span - 1)
    keep = (0x80000000 if w.signed else 0) | ((span - 1) << 23) | 0x007FFFFF
    force = biased << 23
    bits = rng.getrandbits(32 * n)
    bits = (bits & _repeat_u32(keep, n)) | _repeat_u32(force, n)
    return bits.to_bytes(4 * n, "little")


def ndarray_blob(shape, data):
    """NDArray blob (spec 6.3): float32 on CPU."""
    head = struct.pack("<QQiiiBBH", NDARRAY_MAGIC, 0, 1, 0, len(shape), 2, 32, 1)
    head += struct.pack("<%dq" % len(shape), *shape)
    head += struct.pack("<q", len(data))
    return head + data


# {==== The network ====}

class Builder:
    def __init__(self):
        self.lines = []
        self.next_id = 0
        self.weights = []

    def const(self, w):
        idx = len(self.weights)
        self.weights.append(w)
        return "meta[relay.Constant][%d] /* ty=%s */" % (idx, tensor_ty(w.shape))

    def bind(self, expr, ty):
        name = "%%%d" % self.next_id
        self.next_id += 1
        self.lines.append("  %s = %s /* ty=%s */;" % (name, expr, ty))
        return name

    def conv(self, x, shape, cout, k, stride, pad):
        n, cin, h, wd = shape
        fan_in = cin * k * k
        w = self.const(Weight((cout, cin, k, k), math.log2(math.sqrt(2.0 / fan_in)), 2, True))
        oh = (h + 2 * pad - k) // stride + 1
        ow = (wd + 2 * pad - k) // stride + 1
        out = (n, cout, oh, ow)
        attrs = []
        if stride != 1:
            attrs.append("strides=%s" % int_list([stride, stride]))
        attrs.append("padding=%s" % int_list([pad] * 4))
        attrs.append("channels=%d" % cout)
        attrs.append("kernel_size=%s" % int_list([k, k]))
        return self.bind("nn.conv2d(%s, %s, %s)" % (x, w, ", ".join(attrs)), tensor_ty(out)), out

    def batch_norm(self, x, shape):
        c = shape[1]
        gamma = self.const(Weight((c,), 0.0, 1, False))
        beta = self.const(Weight((c,), -4.0, 2, True))
        mean = self.const(Weight((c,), -4.0, 2, True))
        var = self.const(Weight((c,), 0.0, 1, False))
        tup = "(%s, %s, %s)" % (tensor_ty(shape), tensor_ty((c,)), tensor_ty((c,)))
        t = self.bind("nn.batch_norm(%s, %s, %s, %s, %s)" % (x, gamma, beta, mean, var), tup)
        return self.bind("%s.0" % t, tensor_ty(shape))

    def relu(self, x, shape):
        return self.bind("nn.relu(%s)" % x, tensor_ty(shape))

    def conv_bn(self, x, shape, cout, k, stride, pad, relu):
        y, shape = self.conv(x, shape, cout, k, stride, pad)
        y = self.batch_norm(y, shape)
        if relu:
            y = self.relu(y, shape)
        return y, shape

    def bottleneck(self, x, shape, width, stride, project):
        # v1: the stride sits on the first 1x1 convolution.
        y, s = self.conv_bn(x, shape, width, 1, stride, 0, True)
        y, s = self.conv_bn(y, s, width, 3, 1, 1, True)
        y, s = self.conv_bn(y, s, width * 4, 1, 1, 0, False)
        if project:
            sc, _ = self.conv_bn(x, shape, width * 4, 1, stride, 0, False)
        else:
            sc = x
        z = self.bind("add(%s, %s)" % (y, sc), tensor_ty(s))
        return self.relu(z, s), s


def build_resnet50():
    b = Builder()
    shape = (1, 3, 224, 224)
    x, shape = b.conv_bn("%data", shape, 64, 7, 2, 3, True)
    n, c, h, w = shape
    oh, ow = (h + 2 - 3) // 2 + 1, (w + 2 - 3) // 2 + 1
    shape = (n, c, oh, ow)
    x = b.bind("nn.max_pool2d(%s, pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1])" % x,
               tensor_ty(shape))
    for stage, (blocks, width) in enumerate([(3, 64), (4, 128), (6, 256), (3, 512)]):
        for i in range(blocks):
            stride = 2 if (i == 0 and stage > 0) else 1
            x, shape = b.bottleneck(x, shape, width, stride, i == 0)
    pooled = (shape[0], shape[1], 1, 1)
    x = b.bind("nn.global_avg_pool2d(%s)" % x, tensor_ty(pooled))
    flat = (shape[0], shape[1])
    x = b.bind("nn.batch_flatten(%s)" % x, tensor_ty(flat))
    out = (1, 1000)
    dw = b.const(Weight((1000, flat[1]), math.log2(math.sqrt(1.0 / flat[1])), 2, True))
    x = b.bind("nn.dense(%s, %s, units=1000)" % (x, dw), tensor_ty(out))
    bias = b.const(Weight((1000,), -5.0, 2, True))
    tail = "  nn.bias_add(%s, %s) /* ty=%s */" % (x, bias, tensor_ty(out))
    head = ('#[version = "0.0.5"]\n'
            "def @main(%%data: %s) -> %s {\n" % (tensor_ty((1, 3, 224, 224)), tensor_ty(out)))
    text = head + "\n".join(b.lines) + "\n" + tail + "\n}\n\n"
    return text, b.weights


# {==== Metadata (TVM's JSON object graph, pretty-printed like its writer) ====}

def write_metadata(f, weights, rng):
    n = len(weights)
    f.write(b"#[metadata]\n{\n")
    f.write(b'  "root": 1, \n  "nodes": [\n')
    f.write(b'    {\n      "type_key": ""\n    }, \n')
    f.write(b'    {\n      "type_key": "Map", \n      "keys": [\n        "relay.Constant"\n'
            b'      ], \n      "data": [2]\n    }, \n')
    items = ", \n".join("        %d" % (3 + i) for i in range(n))
    f.write(('    {\n      "type_key": "Array", \n      "data": [\n%s\n      ]\n    }'
             % items).encode())
    for i in range(n):
        f.write(('%s\n    {\n      "type_key": "relay.Constant", \n      "attrs": {\n'
                 '        "_checked_type_": "0", \n        "data": "%d", \n'
                 '        "span": "0", \n        "virtual_device_": "0"\n      }\n    }'
                 % (", ", i)).encode())
    f.write(b'\n  ], \n  "b64ndarrays": [\n')
    total = 0
    for i, w in enumerate(weights):
        data = weight_bytes(rng, w)
        total += len(data) // 4
        f.write(b'    "')
        f.write(base64.b64encode(ndarray_blob(w.shape, data)))
        f.write(b'"' if i == n - 1 else b'", \n')
    f.write(('\n  ], \n  "attrs": {"tvm_version": "%s"}\n}\n' % TVM_VERSION).encode())
    return total


def main(argv):
    ap = argparse.ArgumentParser(description="Write ResNet-50 as Relay text with a metadata section.")
    ap.add_argument("output", help="path of the .relay file to write")
    ap.add_argument("--seed", type=int, default=0, help="seed of the weight values (default 0)")
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    rng = random.Random(args.seed)
    text, weights = build_resnet50()
    with open(args.output, "wb") as f:
        f.write(text.encode())
        nfloats = write_metadata(f, weights, rng)
        size = f.tell()
    dt = time.perf_counter() - t0
    print("%s: %d bytes (%.1f MB), %d constants, %d float32 weights, %.1f s"
          % (args.output, size, size / 1e6, len(weights), nfloats, dt))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
