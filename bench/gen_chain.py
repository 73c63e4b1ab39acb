#!/usr/bin/env python3
"""Writes deep, narrow Relay modules (text format v0.0.5) for parser and
type-checker benchmarks. Neither has a metadata section.

Default: @main with N stacked nn.conv2d + nn.relu layers on a small tensor,
every weight a parameter of @main (graph bindings %0, %1, ..., one
`/* ty=... */` comment each, as TVM prints them):

    def @main(%data: Tensor[(1, 8, 16, 16), float32], %w0: Tensor[(8, 8, 3, 3), float32], ...) -> ... {
      %0 = nn.conv2d(%data, %w0, padding=[1, 1, 1, 1], channels=8, kernel_size=[3, 3]) /* ty=... */;
      %1 = nn.relu(%0) /* ty=... */;
      ...
    }

--let: @main is instead one chain of L (default 20,000) nested lets:

    def @main(%x0: Tensor[(4, 4), float32]) -> Tensor[(4, 4), float32] {
      let %x1 = add(%x0, %x0);
      let %x2 = add(%x1, %x1);
      ...
      %x20000
    }

    python3 bench/gen_chain.py OUT.relay [--layers N] [--let [--length L]]
"""

import argparse
import sys


def tensor_ty(shape, dtype="float32"):
    return "Tensor[(" + ", ".join(str(d) for d in shape) + "), %s]" % dtype


def conv_chain(layers, channels, size, types):
    data = (1, channels, size, size)
    wty = tensor_ty((channels, channels, 3, 3))
    dty = tensor_ty(data)
    ann = (lambda: " /* ty=%s */" % dty) if types else (lambda: "")
    params = ["%%data: %s" % dty] + ["%%w%d: %s" % (i, wty) for i in range(layers)]
    out = ['#[version = "0.0.5"]\n',
           "def @main(%s) -> %s {\n" % (", ".join(params), dty)]
    x = "%data"
    n = 0
    for i in range(layers):
        conv = ("nn.conv2d(%s, %%w%d, padding=[1, 1, 1, 1], channels=%d, kernel_size=[3, 3])%s"
                % (x, i, channels, ann()))
        out.append("  %%%d = %s;\n" % (n, conv))
        x = "%%%d" % n
        n += 1
        relu = "nn.relu(%s)%s" % (x, ann())
        if i == layers - 1:
            out.append("  %s\n" % relu)
        else:
            out.append("  %%%d = %s;\n" % (n, relu))
            x = "%%%d" % n
            n += 1
    if layers == 0:
        out.append("  %data\n")
    out.append("}\n")
    return "".join(out)


def let_chain(length, annotate):
    ty = tensor_ty((4, 4))
    colon = (": %s" % ty) if annotate else ""
    out = ['#[version = "0.0.5"]\n',
           "def @main(%%x0: %s) -> %s {\n" % (ty, ty)]
    for i in range(1, length + 1):
        out.append("  let %%x%d%s = add(%%x%d, %%x%d);\n" % (i, colon, i - 1, i - 1))
    out.append("  %%x%d\n}\n" % length)
    return "".join(out)


def main(argv):
    ap = argparse.ArgumentParser(description="Write deep Relay modules for benchmarks.")
    ap.add_argument("output", help="path of the .relay file to write")
    ap.add_argument("--layers", "-n", type=int, default=2000,
                    help="conv2d+relu layers (default 2000)")
    ap.add_argument("--channels", type=int, default=8, help="channels of every layer (default 8)")
    ap.add_argument("--size", type=int, default=16, help="height = width of the input (default 16)")
    ap.add_argument("--no-types", action="store_true", help="omit the /* ty=... */ comments")
    ap.add_argument("--let", action="store_true", help="write the let chain instead")
    ap.add_argument("--length", type=int, default=20000, help="lets in the chain (default 20000)")
    ap.add_argument("--annotate", action="store_true",
                    help="give every let variable a type annotation")
    args = ap.parse_args(argv)
    if args.layers < 0 or args.length < 0:
        ap.error("counts must be >= 0")

    if args.let:
        text = let_chain(args.length, args.annotate)
        what = "%d lets" % args.length
    else:
        text = conv_chain(args.layers, args.channels, args.size, not args.no_types)
        what = "%d conv2d+relu layers" % args.layers
    data = text.encode()
    with open(args.output, "wb") as f:
        f.write(data)
    print("%s: %d bytes (%.1f MB), %s" % (args.output, len(data), len(data) / 1e6, what))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
