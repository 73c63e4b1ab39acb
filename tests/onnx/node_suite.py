#!/usr/bin/python3
"""node_suite.py: the ONNX backend node tests, run by relayc.

usage: node_suite.py --relayc RELAYC --data DIR [--known FILE] [--jobs N]
                     [--filter REGEX] [--update] [--summary] [-v]

DIR holds the cases that python3-onnx's generator writes (DIR/node/test_*/
model.onnx and test_data_set_N/{input,output}_K.pb); when DIR/node is
missing they are generated first. Each case is imported (`relayc import`),
type checked, then run on every data set with the interpreter (--interp)
and compiled (at -O2, the default), and every output must have the
expected dtype and shape and be within the suite's tolerances (rtol 1e-3,
atol 1e-7, as onnx.backend.test's runner compares node tests, NaN equal
to NaN). A case passes when both modes pass.

A case that fails gets a category: the first step that failed and why:
  opset    an opset relayc does not read (before 7, or none of the default
           domain: the training operators)
  op       an operator relayc does not import ("operator X is not supported")
  dynamic  an input that relayc needs as a constant (a shape, axes, bounds)
           is given at run time: shapes are static. The case then runs
           again with its inputs as initializers (all but the first, and
           the first when it is a scalar or an integer vector), as exported models
           have them: "dynamic" means that variant passes, "dynamic+CAT"
           that it fails with category CAT
  attr     the importer refuses an attribute, input or form of the operator
  dtype    an element type relayc does not have (strings, ...)
  seq      sequences or optionals (inputs or outputs that are not tensors)
  type     the imported text does not type check
  build    the compiled mode does not build
  run      a mode stops with an error at run time
  wrong    a mode's outputs differ (wrong:interp or wrong:compiled when the
           other mode passes)
  crash    relayc died of a signal or ran out of time (never acceptable:
           an unsupported feature must be a clear error)
The known failures (--known, default node_known_failures.txt beside this
script) list one case a line with its category; the run fails when a case
fails that is not listed, when a listed case passes, and when a listed
case fails for another category, so the list stays true. --update rewrites
the list from this run instead (a --filter run updates only its cases).
--summary prints the pass counts per operator family as a Markdown table.
Exit status: 0 when the results match the list, 1 otherwise, 2 on usage
or setup errors.
"""
import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

try:
    import numpy as np
    # python3-onnx predates NumPy 1.24, which removed these aliases.
    for alias, t in (("float", float), ("int", int), ("bool", bool), ("object", object), ("complex", complex)):
        setattr(np, alias, t)
    import onnx
    from onnx import numpy_helper
except ImportError as e:
    sys.stderr.write("node_suite: %s: install python3-onnx and python3-numpy (scripts/deps.sh test)\n" % e)
    sys.exit(2)

RTOL, ATOL = 1e-3, 1e-7
TIMEOUT = 300  # seconds for one relayc command

# Operator families for the summary, in the order the table lists them.
FAMILIES = [
    ("Elementwise math", "Abs Acos Acosh Add Asin Asinh Atan Atanh BitShift Ceil Cos Cosh Div Erf Exp Floor "
     "IsInf IsNaN Log Max Mean Min Mod Mul Neg Pow Reciprocal Round Sign Sin Sinh Sqrt Sub Sum Tan"),
    ("Logic and comparison", "And Equal Greater GreaterOrEqual Less LessOrEqual Not Or Where Xor"),
    ("Activations", "Celu Clip Elu Gelu HardSigmoid HardSwish Hardmax LeakyRelu LogSoftmax PRelu Relu Selu "
     "Shrink Sigmoid Softmax Softplus Softsign Tanh ThresholdedRelu"),
    ("Reductions", "ArgMax ArgMin CumSum ReduceL1 ReduceL2 ReduceLogSum ReduceLogSumExp ReduceMax ReduceMean "
     "ReduceMin ReduceProd ReduceSum ReduceSumSquare TopK"),
    ("Convolution, pooling, matmul", "AveragePool Conv ConvTranspose Det Einsum Gemm GlobalAveragePool "
     "GlobalMaxPool LpPool MatMul MaxPool MaxUnpool"),
    ("Normalization", "BatchNormalization InstanceNormalization LayerNormalization LRN MeanVarianceNormalization"),
    ("Shape and data movement", "Cast CastLike Compress Concat Constant ConstantOfShape DepthToSpace Dropout "
     "Expand EyeLike Flatten Gather GatherElements GatherND Identity NonZero OneHot Pad Range Reshape Resize "
     "ReverseSequence Scatter ScatterElements ScatterND Shape Size Slice SpaceToDepth Split Squeeze Tile "
     "Transpose Trilu Unique Unsqueeze Upsample"),
    ("Recurrent", "GRU LSTM RNN"),
    ("Control flow", "If Loop Scan"),
    ("Losses", "NegativeLogLikelihoodLoss SoftmaxCrossEntropyLoss"),
    ("Quantization", "ConvInteger DequantizeLinear DynamicQuantizeLinear MatMulInteger QLinearConv "
     "QLinearMatMul QuantizeLinear"),
    ("Sequences, optionals, strings", "OptionalGetElement OptionalHasElement SequenceInsert SequenceMap "
     "StringNormalizer TfIdfVectorizer"),
    ("Signal, random, training", "Adagrad Adam Bernoulli BlackmanWindow DFT HammingWindow HannWindow "
     "MelWeightMatrix Momentum STFT"),
    ("Detection and sampling", "GridSample NonMaxSuppression RoiAlign"),
]
FAMILY_OF = {op: fam for fam, ops in FAMILIES for op in ops.split()}
OTHER = "Other"


def generate(data):
    """Writes the generator's cases into data (python3-onnx's cmd_tools):
    into a folder beside it first, so that an interrupted run leaves no
    partial data/node behind."""
    os.makedirs(data, exist_ok=True)
    sys.stderr.write("node_suite: generating the ONNX backend test data into %s\n" % data)
    part = tempfile.mkdtemp(prefix="gen-", dir=data)
    code = ("import sys, numpy as np; np.float=float; np.int=int; np.bool=bool; np.object=object; "
            "np.complex=complex; sys.argv=['x','generate-data','-o',%r]; import runpy; "
            "runpy.run_module('onnx.backend.test.cmd_tools', run_name='__main__')" % part)
    r = subprocess.run([sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0 or not os.path.isdir(os.path.join(part, "node")):
        sys.stderr.write("node_suite: the generator failed:\n%s" % r.stderr[-2000:])
        shutil.rmtree(part, ignore_errors=True)
        sys.exit(2)
    try:
        os.rename(os.path.join(part, "node"), os.path.join(data, "node"))
    except OSError:
        if not os.path.isdir(os.path.join(data, "node")):
            raise
        # Another run generated the same cases at the same time.
    shutil.rmtree(part, ignore_errors=True)


def case_op(case_dir, model):
    """The operator a case tests: its node's, or for a function expanded into
    several nodes (NAME_expanded) the one node of the case NAME."""
    ops = [n.op_type for n in model.graph.node]
    if len(ops) == 1:
        return ops[0]
    name = os.path.basename(case_dir)
    if name.endswith("_expanded"):
        base = case_dir[: -len("_expanded")]
        if os.path.exists(os.path.join(base, "model.onnx")):
            base_ops = [n.op_type for n in onnx.load(os.path.join(base, "model.onnx")).graph.node]
            if len(base_ops) == 1:
                return base_ops[0]
    return ops[0] if ops else "?"


def relayc_cmd(args, log):
    """Runs relayc; returns (status, output). Status "crash" for a signal or
    a timeout."""
    try:
        r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        log.append("$ %s\n  timed out after %d s" % (" ".join(args), TIMEOUT))
        return "crash", ""
    except OSError as e:
        log.append("$ %s\n  cannot run it: %s" % (" ".join(args), e))
        return "crash", ""
    out = r.stdout.decode("utf-8", "replace")
    if r.returncode not in (0, 1):
        log.append("$ %s\n  exit %d\n%s" % (" ".join(args), r.returncode, out[-1500:]))
        return "crash", out
    if r.returncode == 1:
        log.append("$ %s\n%s" % (" ".join(args), out[-1500:]))
        return "error", out
    return "ok", out


def import_category(msg):
    if re.search(r"opset \d+ is not supported|imports no opset of the default domain", msg):
        return "opset"
    if re.search(r"operator \S+ is not supported|operators of domain", msg):
        return "op"
    if re.search(r"not (a )?constants?|needs (a )?constant|computed by the graph", msg):
        return "dynamic"
    if re.search(r"element type|dtype|a cast to", msg):
        return "dtype"
    if re.search(r"only tensor inputs|is not a tensor|sequence|optional", msg):
        return "seq"
    return "attr"


def load_pb(path, vtype):
    """A data file as a numpy array, or None for what is not a tensor."""
    if not vtype.HasField("tensor_type"):
        return None
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def compare(got_path, want):
    """None when the .npy at got_path matches want, else why not."""
    if not os.path.exists(got_path):
        return "no output file %s" % os.path.basename(got_path)
    got = np.load(got_path)
    if got.dtype != want.dtype:
        return "dtype %s, expected %s" % (got.dtype, want.dtype)
    if got.shape != want.shape:
        return "shape %s, expected %s" % (got.shape, want.shape)
    try:
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)
    except AssertionError as e:
        return str(e).strip().replace("\n", " | ")[:400]
    return None


times = {}  # case name: seconds it took


def run_case(relayc, case_dir, work):
    """Runs one case; returns (name, op, category or None, log lines)."""
    name = os.path.basename(case_dir)
    log = []
    model_path = os.path.join(case_dir, "model.onnx")
    model = onnx.load(model_path)
    op = case_op(case_dir, model)
    wd = os.path.join(work, name)
    os.makedirs(wd, exist_ok=True)
    t0 = time.monotonic()
    try:
        return (name, op) + run_steps(relayc, case_dir, model, model_path, wd, log) + (log,)
    finally:
        shutil.rmtree(wd, ignore_errors=True)
        times[name] = time.monotonic() - t0


def freeze(model, case_dir, wd):
    """The case's model with its inputs as initializers, from the first data
    set: every input but the first, and the first too when it is a scalar
    or an integer vector (a shape). Returns (model path, the data set, the
    (input, file index) pairs left as inputs)."""
    s = sorted(d for d in os.listdir(case_dir) if d.startswith("test_data_set_"))[0]
    m = onnx.ModelProto()
    m.CopyFrom(model)
    inits = {t.name for t in model.graph.initializer}
    slots = []
    for k, v in enumerate(v for v in model.graph.input if v.name not in inits):
        pb = os.path.join(case_dir, s, "input_%d.pb" % k)
        arr = load_pb(pb, v.type) if os.path.exists(pb) else None
        if arr is not None and (k > 0 or arr.ndim == 0 or (arr.dtype.kind in "iu" and arr.ndim == 1)):
            m.graph.initializer.append(numpy_helper.from_array(arr, v.name))
        else:
            slots.append((v, k))
    path = os.path.join(wd, "frozen.onnx")
    onnx.save(m, path)
    return path, s, slots


def run_steps(relayc, case_dir, model, model_path, wd, log, slots=None, sets=None):
    relay = os.path.join(wd, "m.relay")
    st, out = relayc_cmd([relayc, "import", model_path, "-o", relay], log)
    if st != "ok":
        cat = "crash" if st == "crash" else import_category(out)
        if cat == "dynamic" and slots is None:
            # The same case with those inputs as constants, as exported
            # models have them: "dynamic" when it passes, else
            # "dynamic+CATEGORY" of how it fails.
            path, s, frozen_slots = freeze(model, case_dir, wd)
            fcat, = run_steps(relayc, case_dir, onnx.load(path), path, wd, log, frozen_slots, [s])
            return ("dynamic" if fcat is None else "dynamic+" + fcat,)
        return (cat,)
    for v in list(model.graph.input) + list(model.graph.output):
        if not v.type.HasField("tensor_type"):
            log.append("%s is not a tensor" % v.name)
            return ("seq",)
    st, out = relayc_cmd([relayc, "check", relay], log)
    if st != "ok":
        return ("crash" if st == "crash" else "type",)
    # @main's parameters: the graph's inputs that are not initializers, in order.
    with open(relay) as f:
        sig = next((l for l in f if l.startswith("def @main(")), "")
    params = re.findall(r"%([A-Za-z0-9_.]+):", sig.split(") ->")[0] if ") ->" in sig else sig)
    if slots is None:
        inits = {t.name for t in model.graph.initializer}
        slots = [(v, k) for k, v in enumerate(v for v in model.graph.input if v.name not in inits)]
    outputs = list(model.graph.output)
    if sets is None:
        sets = sorted(d for d in os.listdir(case_dir) if d.startswith("test_data_set_"))
    failed = {}
    for s in sets:
        sd = os.path.join(case_dir, s)
        args = []
        for p, (v, k) in enumerate(slots):
            pb = os.path.join(sd, "input_%d.pb" % k)
            if not os.path.exists(pb):
                continue  # an optional input the case leaves out
            arr = load_pb(pb, v.type)
            if p >= len(params):
                log.append("input %d (%s) is not a parameter of @main" % (k, v.name))
                return ("attr",)
            npy = os.path.join(wd, "in%d.npy" % k)
            np.save(npy, arr)
            args += ["--input", "%s=%s" % (params[p], npy)]
        wants = [load_pb(os.path.join(sd, "output_%d.pb" % k), o.type) for k, o in enumerate(outputs)]
        for mode in ("interp", "compiled"):
            if mode in failed:
                continue
            dest = os.path.join(wd, "%s_%s" % (s, mode))
            cmd = [relayc, "run", relay] + (["--interp"] if mode == "interp" else []) + args
            cmd += ["--output", dest + (".npy" if len(outputs) == 1 else "")]
            st, out = relayc_cmd(cmd, log)
            if st == "crash":
                return ("crash",)
            if st == "error":
                failed[mode] = "build" if mode == "compiled" and re.search(r"C compiler|cc failed|\.c:\d+", out) \
                    else "run"
                continue
            for k, want in enumerate(wants):
                got = dest + ".npy" if len(outputs) == 1 else os.path.join(dest, "%d.npy" % k)
                why = compare(got, want)
                if why:
                    log.append("%s %s, output %d (%s): %s" % (s, mode, k, outputs[k].name, why))
                    failed[mode] = "wrong"
                    break
    if not failed:
        return (None,)
    cats = set(failed.values())
    if len(failed) == 2:
        if "build" in cats:
            return ("build",)
        return ("run",) if "run" in cats else ("wrong",)
    (mode, cat), = failed.items()
    return ("%s:%s" % (cat, mode) if cat in ("wrong", "run") else cat,)


def read_known(path):
    known = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                line = line.split("#", 1)[0].split()
                if len(line) >= 2:
                    known[line[0]] = line[1]
    return known


def write_known(path, known):
    header = []
    if os.path.exists(path):
        with open(path) as f:
            header = [l for l in f if l.startswith("#")]
    with open(path, "w") as f:
        f.writelines(header)
        width = max([len(n) for n in known] + [1]) + 2
        for n in sorted(known):
            f.write("%-*s%s\n" % (width, n, known[n]))


def summary(results):
    rows = {}
    for name, op, cat, _ in results:
        fam = FAMILY_OF.get(op, OTHER)
        r = rows.setdefault(fam, [0, 0, set()])
        r[0] += 1
        r[1] += cat is None
        r[2].add(op)
    order = [f for f, _ in FAMILIES] + [OTHER]
    print("| Operator family | Operators | Cases | Pass |")
    print("|---|---:|---:|---:|")
    for fam in order:
        if fam in rows:
            n, p, ops = rows[fam]
            print("| %s | %d | %d | %d |" % (fam, len(ops), n, p))
    total = len(results)
    passed = sum(1 for r in results if r[2] is None)
    print("| **All** | %d | %d | %d |" % (len({r[1] for r in results}), total, passed))


def main():
    ap = argparse.ArgumentParser(description="ONNX backend node tests through relayc")
    ap.add_argument("--relayc", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--known", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                   "node_known_failures.txt"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--filter", default=None, help="only the cases whose name matches this regex")
    ap.add_argument("--update", action="store_true", help="rewrite the known failures from this run")
    ap.add_argument("--summary", action="store_true", help="print the pass counts per operator family")
    ap.add_argument("-v", "--verbose", action="store_true", help="print the log of every failing case")
    ap.add_argument("--slowest", type=int, default=0, metavar="N", help="print the N slowest cases")
    a = ap.parse_args()
    relayc = os.path.abspath(a.relayc)
    if not os.path.isdir(os.path.join(a.data, "node")):
        generate(a.data)
    node = os.path.join(a.data, "node")
    cases = sorted(os.path.join(node, d) for d in os.listdir(node)
                   if os.path.exists(os.path.join(node, d, "model.onnx")))
    if a.filter:
        cases = [c for c in cases if re.search(a.filter, os.path.basename(c))]
    work = tempfile.mkdtemp(prefix="relayc-node-")
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
            results = list(ex.map(lambda c: run_case(relayc, c, work), cases))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    known = read_known(a.known)
    ran = {r[0] for r in results}
    problems = []
    for name, op, cat, log in results:
        want = known.get(name)
        if cat != want:
            if cat is None:
                problems.append("NEW PASS: %s (listed as %s): remove it from the known failures" % (name, want))
            elif want is None:
                problems.append("NEW FAILURE: %s (%s)" % (name, cat))
            else:
                problems.append("CHANGED: %s fails as %s, listed as %s" % (name, cat, want))
            if cat is not None:
                problems.extend("  " + l.replace("\n", "\n  ") for l in log[-3:])
        elif cat is not None and a.verbose:
            print("known failure %s (%s)" % (name, cat))
            for l in log[-3:]:
                print("  " + l.replace("\n", "\n  "))
    passed = sum(1 for r in results if r[2] is None)
    print("node_suite: %d of %d cases pass (interpreted and compiled)" % (passed, len(results)))
    if a.slowest:
        for n in sorted(times, key=lambda n: -times[n])[: a.slowest]:
            print("  %6.2f s  %s" % (times[n], n))
    if a.summary:
        summary(results)
    if a.update:
        new = {n: c for n, c in known.items() if n not in ran}
        new.update({r[0]: r[2] for r in results if r[2] is not None})
        write_known(a.known, new)
        print("node_suite: wrote %d known failures to %s" % (len(new), a.known))
        return 0
    for p in problems:
        print(p)
    if problems:
        print("node_suite: %d cases differ from %s (rerun with --update after checking them)" %
              (sum(1 for p in problems if not p.startswith("  ")), a.known))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
