#!/usr/bin/python3
"""difftest.py: differential testing of relayc with generated programs.

For each seed, relaygen.py makes a program and its inputs; the program runs
in the reference interpreter and compiled at each level (-O0, -O2, -O3 by
default), and the results must agree: integers and bools exactly, floats
within --rtol/--atol (npycmp's test |got - want| <= atol + rtol * |want|;
default 1e-5 and 1e-6, although the loop kernels are meant to agree with
the reference kernels to the bit). A run-time error must be the same error
(position and message) in every mode. A crash, a timeout, a C compiler
error or warning, or a difference is a failure.

Several seeds share one module (their globals prefixed sN_), built once per
level into a shared library whose functions `relayc run LIB --function`
calls one by one: the C compiler's fixed cost is paid once per batch. A
batch that does not build is retried program by program.

  difftest.py --relayc R --npycmp N --seeds 1-50 [--batch 25]   fixed seeds
  difftest.py --relayc R --npycmp N --fuzz SECONDS [--out DIR]   new seeds
                                                                  until time
                                                                  is up

In fuzz mode each failing program is shrunk (shrink.py) and saved with its
inputs under --out (orig.relay, shrunk.relay, inputs/, report.txt).
Exit status: 0 when everything agrees, 1 on a failure, 2 on bad usage.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import relaygen as rg  # noqa: E402


class Tools:
    def __init__(self, args):
        self.relayc = os.path.abspath(args.relayc)
        self.npycmp = os.path.abspath(args.npycmp)
        self.cc = args.cc
        self.cflags = args.cflags
        self.threads = args.threads
        self.levels = args.levels.split(',')
        self.rtol = args.rtol
        self.atol = args.atol
        self.timeout = args.timeout
        self.knobs = dict(rg.SMALL_KNOBS) if args.small else {}
        self.knobs.update(parse_knobs(args.knob))


def parse_knobs(items):
    knobs = {}
    for item in items or ():
        k, v = item.split('=', 1)
        if k not in rg.DEFAULT_KNOBS:
            raise SystemExit('difftest: unknown knob %s' % k)
        knobs[k] = tuple(int(x) for x in v.split(',')) if ',' in v else int(v)
    return knobs


def run(cmd, timeout, cwd=None):
    """(returncode, stdout, stderr); returncode None on a timeout."""
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout, cwd=cwd)
    except subprocess.TimeoutExpired:
        return None, '', 'timeout after %ss' % timeout
    except OSError as e:
        return 127, '', 'cannot run %s: %s' % (cmd[0], e)
    return p.returncode, p.stdout.decode('utf-8', 'replace'), p.stderr.decode('utf-8', 'replace')


# {==== Files of one program ====}

def write_inputs(prog, indir, tag):
    """Writes @main's inputs as .npy files; returns the --input arguments."""
    args = []
    params = [p for p, _ in prog.main.params]
    for name, ty, values in prog.inputs:
        if name not in params:
            continue
        path = os.path.join(indir, '%s%s.npy' % (tag, name))
        rg.write_npy(path, ty[1], ty[2], values)
        args += ['--input', '%s=%s' % (name, path)]
    return args


def norm_error(err):
    """The run-time error of relayc's stderr, made comparable between the
    interpreter and compiled code."""
    for line in err.splitlines():
        if 'run-time error:' in line:
            msg = line.split('run-time error:', 1)[1].strip()
            return re.sub(r'(found no clause).*', r'\1', msg)
    return err.strip().splitlines()[-1] if err.strip() else ''


def outcome(rc, err, out_path):
    """What one run did: ('ok', path), ('error', message), ('crash', what)
    or ('timeout', what)."""
    if rc is None:
        return ('timeout', err)
    if rc == 0:
        return ('ok', out_path)
    if rc == 1 and 'run-time error:' in err:
        return ('error', norm_error(err))
    if rc < 0:
        return ('crash', 'signal %d' % -rc)
    return ('crash', 'exit %d: %s' % (rc, err.strip()[-600:]))


def cc_signature(err):
    """A warning or error of the C compiler, without names and positions."""
    m = re.search(r'\[(-W[^\]]+)\]', err)
    if m:
        return m.group(1)
    for line in err.splitlines():
        if 'error' in line:
            return re.sub(r"'[^']*'|\d+", '_', line.split('error', 1)[1])[:120]
    return err.strip()[:120]


class Runner:
    """Runs programs in a work directory and compares the modes."""

    def __init__(self, tools, work):
        self.t = tools
        self.work = work
        os.makedirs(work, exist_ok=True)

    def build(self, relay, level, so):
        """Builds relay into so: (library or None, problem or None). A
        warning is a problem, but the library is still run."""
        cmd = [self.t.relayc, 'build', relay, '-' + level, '-o', so]
        if self.t.cc:
            cmd += ['--cc', self.t.cc]
        if self.t.cflags:
            cmd += ['--cflags', self.t.cflags]
        if self.t.threads:
            cmd += ['--threads', self.t.threads]
        rc, out, err = run(cmd, max(120, self.t.timeout * 4))
        if rc is None:
            return None, ('timeout', 'relayc build: ' + err)
        if rc != 0:
            return None, ('cc', err.strip() or out.strip() or 'exit %s' % rc)
        if err.strip() or out.strip():
            return so, ('cc', err.strip() or out.strip())
        return so, None

    def exec_mode(self, target, fname, inputs, mode, out_path):
        if os.path.isdir(out_path):
            shutil.rmtree(out_path)
        elif os.path.exists(out_path):
            os.remove(out_path)
        cmd = [self.t.relayc, 'run', target, '--function', fname] + inputs + ['--output', out_path]
        if mode == 'interp':
            cmd.insert(3, '--interp')
        rc, _, err = run(cmd, self.t.timeout)
        return outcome(rc, err, out_path)

    def compare(self, a, b):
        """None when outcomes a (interpreter) and b agree, else the kind of
        difference."""
        if a[0] == 'ok' and b[0] == 'ok':
            rc, out, err = run([self.t.npycmp, '--rtol', self.t.rtol, '--atol', self.t.atol, b[1], a[1]], 60)
            if rc != 0:
                return ('mismatch', (out + err).strip()[:600])
            return None
        if a[0] == 'error' and b[0] == 'error':
            if a[1] != b[1]:
                return ('error-diff', 'interp: %s\ncompiled: %s' % (a[1], b[1]))
            return None
        if b[0] in ('crash', 'timeout'):
            return (b[0], b[1])
        return ('error-diff', 'interp: %s: %s\ncompiled: %s: %s' % (a[0], a[1], b[0], b[1]))

    def check_program(self, relay, fname, inputs, levels, libs, tag):
        """Runs one program in every mode. libs[level] is (library or None,
        problem or None) from build. Returns (failures,
        interp outcome): failures are (mode, kind, detail)."""
        fails = []
        a = self.exec_mode(relay, fname, inputs, 'interp', os.path.join(self.work, tag + 'interp'))
        if a[0] in ('crash', 'timeout'):
            fails.append(('interp', a[0], a[1]))
            return fails, a
        for level in levels:
            lib, problem = libs[level]
            if problem:
                fails.append((level, problem[0], problem[1]))
            if not lib:
                continue
            b = self.exec_mode(lib, fname, inputs, level, os.path.join(self.work, tag + level))
            diff = self.compare(a, b)
            if diff:
                fails.append((level, diff[0], diff[1]))
        return fails, a

    def signature(self, fails):
        """What a failure looks like, for the shrinker: the first failing
        mode and its kind (and the C compiler's diagnostic)."""
        mode, kind, detail = fails[0]
        if kind == 'cc':
            return (mode, kind, cc_signature(detail))
        if kind == 'crash' and detail.startswith('signal'):
            return (mode, kind, detail)
        if kind == 'error-diff':
            return (mode, kind, tuple(x.split(':', 1)[0] for x in detail.splitlines()))
        return (mode, kind)

    def run_standalone(self, prog, levels, tag='one_'):
        """Checks, builds and runs one standalone program (entry @main).
        Returns (failures, interp outcome, text); failures is None when the
        program does not type-check."""
        d = os.path.join(self.work, tag + 'dir')
        if os.path.exists(d):
            shutil.rmtree(d)
        os.makedirs(d)
        relay = os.path.join(d, 'prog.relay')
        text = rg.module_text([prog])
        with open(relay, 'w') as f:
            f.write(text)
        rc, _, err = run([self.t.relayc, 'check', relay], 60)
        if rc != 0:
            return None, err, text
        inputs = write_inputs(prog, d, '')
        libs = {}
        for level in levels:
            libs[level] = self.build(relay, level, os.path.join(d, 'prog_%s.so' % level))
        fails, a = self.check_program(relay, 'main', inputs, levels, libs, tag)
        return fails, a, text


# {==== Batches ====}

def run_batch(runner, seeds, log, stats):
    """Generates, builds and compares the programs of seeds in one module.
    Returns a list of (seed, failures)."""
    t = runner.t
    work = runner.work
    for name in os.listdir(work):
        p = os.path.join(work, name)
        shutil.rmtree(p) if os.path.isdir(p) else os.remove(p)
    progs = [rg.generate(s, 's%d_' % s, t.knobs) for s in seeds]
    relay = os.path.join(work, 'batch.relay')
    with open(relay, 'w') as f:
        f.write(rg.module_text(progs))
    results = []
    rc, _, err = run([t.relayc, 'check', relay], 120)
    if rc != 0:
        # A generator bug: find the programs that do not type-check.
        for s, p in zip(seeds, progs):
            one = os.path.join(work, 'check_%d.relay' % s)
            with open(one, 'w') as f:
                f.write(rg.module_text([p]))
            rc1, _, err1 = run([t.relayc, 'check', one], 60)
            if rc1 != 0:
                results.append((s, [('check', 'check', err1.strip()[:2000])]))
        if not results:
            results.append((seeds[0], [('check', 'check', 'the batch does not type-check:\n' + err[:2000])]))
        bad = set(s for s, _ in results)
        keep = [(s, p) for s, p in zip(seeds, progs) if s not in bad]
        if not keep:
            return results
        seeds = [s for s, _ in keep]
        progs = [p for _, p in keep]
        with open(relay, 'w') as f:
            f.write(rg.module_text(progs))
    libs = {}
    for level in t.levels:
        t0 = time.time()
        libs[level] = runner.build(relay, level, os.path.join(work, 'batch_%s.so' % level))
        stats['build_s'] = stats.get('build_s', 0) + time.time() - t0
    for s, p in zip(seeds, progs):
        inputs = write_inputs(p, work, 's%d_' % s)
        plibs = {}
        alone = False
        for level in t.levels:
            lib, problem = libs[level]
            if problem and problem[0] == 'cc' and lib and len(seeds) > 1:
                # A warning in a function names the program it is about.
                mine = set(re.findall(r'_s(\d+)_', problem[1])) & set(str(x) for x in seeds)
                if mine and 'At top level' not in problem[1]:
                    plibs[level] = (lib, problem if str(s) in mine else None)
                    continue
            if problem and len(seeds) > 1:
                alone = True
            plibs[level] = (lib, problem)
        src = relay
        if alone:
            # The batch did not build cleanly: this program alone, in
            # every mode (positions in errors are those of its own file).
            src = os.path.join(work, 'one_%d.relay' % s)
            with open(src, 'w') as f:
                f.write(rg.module_text([p]))
            for level in t.levels:
                plibs[level] = runner.build(src, level, os.path.join(work, 'one_%d_%s.so' % (s, level)))
        fails, a = runner.check_program(src, 's%d_main' % s, inputs, t.levels, plibs, 's%d_' % s)
        stats['programs'] = stats.get('programs', 0) + 1
        if a[0] == 'error':
            stats['errors'] = stats.get('errors', 0) + 1
            log('seed %d: every mode fails with the same run-time error: %s' % (s, a[1]))
        if fails:
            results.append((s, fails))
    return results


def describe(seed, fails):
    lines = ['seed %d:' % seed]
    for mode, kind, detail in fails:
        lines.append('  %s: %s' % (mode, kind))
        lines += ['    ' + x for x in detail.splitlines()[:12]]
    return '\n'.join(lines)


def save_case(runner, out, seed, fails, log, shrink_seconds):
    """Saves the standalone program of seed with its inputs under
    out/seed-N/, shrinks it and saves the shrunk program too."""
    import shrink
    t = runner.t
    d = os.path.join(out, 'seed-%d' % seed)
    if os.path.exists(d):
        shutil.rmtree(d)
    os.makedirs(os.path.join(d, 'inputs'))
    prog = rg.generate(seed, '', t.knobs)
    with open(os.path.join(d, 'orig.relay'), 'w') as f:
        f.write(rg.module_text([prog], 'seed %d, generated by tests/diff/relaygen.py' % seed))
    args = write_inputs(prog, os.path.join(d, 'inputs'), '')
    report = [describe(seed, fails)]
    levels = [m for m, _, _ in fails if m not in ('interp', 'check')]
    levels = levels[:1] or t.levels[:1]
    sfails, _, _ = runner.run_standalone(prog, levels)
    if fails[0][0] == 'check':
        report.append('the program does not type-check: a generator bug')
    elif not sfails:
        report.append('the standalone program does not fail: only the batch does (see batch/)')
        bd = os.path.join(d, 'batch')
        shutil.copytree(runner.work, bd, ignore=shutil.ignore_patterns('*.so'))
    else:
        sig = runner.signature(sfails)
        report.append('signature: %r' % (sig,))
        t0 = time.time()
        small, ntests = shrink.shrink(runner, prog, sig, levels, shrink_seconds, log)
        report.append('shrunk in %.0f s with %d tests' % (time.time() - t0, ntests))
        os.makedirs(os.path.join(d, 'shrunk_inputs'))
        sargs = write_inputs(small, os.path.join(d, 'shrunk_inputs'), '')
        with open(os.path.join(d, 'shrunk.relay'), 'w') as f:
            f.write(rg.module_text([small], 'seed %d shrunk: %r' % (seed, sig)))
        report.append('run: relayc run shrunk.relay --interp %s' % ' '.join(
            a.replace(os.path.join(d, ''), '') for a in sargs))
    report.append('run: relayc run orig.relay --interp %s' % ' '.join(a.replace(os.path.join(d, ''), '') for a in args))
    with open(os.path.join(d, 'report.txt'), 'w') as f:
        f.write('\n'.join(report) + '\n')
    log('saved %s' % d)


def parse_seeds(text):
    out = []
    for part in text.split(','):
        if '-' in part:
            a, b = part.split('-')
            out += list(range(int(a), int(b) + 1))
        else:
            out.append(int(part))
    return out


def fixed(args, tools):
    seeds = parse_seeds(args.seeds)
    work = args.work or tempfile.mkdtemp(prefix='difftest-')
    runner = Runner(tools, work)
    stats = {}
    t0 = time.time()
    failed = []
    for i in range(0, len(seeds), args.batch):
        for s, fails in run_batch(runner, seeds[i:i + args.batch], print, stats):
            print(describe(s, fails))
            failed.append(s)
    print('difftest: %d programs (seeds %s), interpreter vs %s: %d failed, %d agreeing run-time errors; '
          '%.1f s (C compiler %.1f s)' % (stats.get('programs', 0), args.seeds, ','.join(tools.levels), len(failed),
                                         stats.get('errors', 0), time.time() - t0, stats.get('build_s', 0)))
    if failed:
        print('difftest: failing seeds: %s (replay one: difftest.py --seeds N --batch 1 --work DIR)' %
              ','.join(str(s) for s in failed))
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


def fuzz_worker(args, tools, wid, deadline, queue):
    work = os.path.join(args.out, 'work%d' % wid)
    runner = Runner(tools, work)
    rnd = int.from_bytes(os.urandom(6), 'little')
    stats = {'failed': []}
    n = 0

    def log(msg):
        print('[%d] %s' % (wid, msg), flush=True)
    try:
        while time.time() < deadline:
            seeds = [(rnd + n + k) % 10 ** 12 + 10 ** 6 for k in range(args.batch)]
            n += args.batch
            for s, fails in run_batch(runner, seeds, log, stats):
                log(describe(s, fails))
                stats['failed'].append(s)
                save_case(runner, args.out, s, fails, log, args.shrink_seconds)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        queue.put(stats)


def fuzz(args, tools):
    import multiprocessing
    os.makedirs(args.out, exist_ok=True)
    deadline = time.time() + args.fuzz
    queue = multiprocessing.Queue()
    procs = [multiprocessing.Process(target=fuzz_worker, args=(args, tools, w, deadline, queue))
             for w in range(args.jobs)]
    for p in procs:
        p.start()
    total = {'programs': 0, 'errors': 0, 'failed': []}
    for _ in procs:
        st = queue.get()
        total['programs'] += st.get('programs', 0)
        total['errors'] += st.get('errors', 0)
        total['failed'] += st['failed']
    for p in procs:
        p.join()
    print('fuzz-diff: %d programs in %d s, %d failed%s; %d agreeing run-time errors' % (
        total['programs'], args.fuzz, len(total['failed']),
        ' (seeds %s, saved under %s)' % (','.join(map(str, total['failed'])), args.out) if total['failed'] else '',
        total['errors']))
    return 1 if total['failed'] else 0


def replay(args, tools):
    """Runs each seed of --shrink as a standalone program; a failing one is
    shrunk and saved under --out."""
    os.makedirs(args.out, exist_ok=True)
    runner = Runner(tools, os.path.join(args.out, 'work-replay'))
    failed = 0
    for s in parse_seeds(args.shrink):
        prog = rg.generate(s, '', tools.knobs)
        fails, a, _ = runner.run_standalone(prog, tools.levels)
        if fails is None:
            fails = [('check', 'check', a)]
        if not fails:
            print('seed %d: no failure' % s)
            continue
        failed += 1
        print(describe(s, fails))
        save_case(runner, args.out, s, fails, print, args.shrink_seconds)
    shutil.rmtree(runner.work, ignore_errors=True)
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--relayc', required=True)
    ap.add_argument('--npycmp', required=True)
    ap.add_argument('--cc', default=None, help='the C compiler (relayc build --cc)')
    ap.add_argument('--cflags', default=None, help='more C compiler flags (relayc build --cflags), e.g. sanitizers')
    ap.add_argument('--threads', default=None, help='the kernels\' thread count (relayc build --threads); with '
                    'RLY_SPLIT_ALL=1 in the environment every kernel that can split does')
    ap.add_argument('--levels', default='O0,O2,O3')
    ap.add_argument('--rtol', default='1e-5')
    ap.add_argument('--atol', default='1e-6')
    ap.add_argument('--timeout', type=int, default=30, help='seconds per run')
    ap.add_argument('--seeds', help='fixed seeds: 1-50,70')
    ap.add_argument('--batch', type=int, default=25, help='programs per module')
    ap.add_argument('--work', help='work directory (kept)')
    ap.add_argument('--fuzz', type=int, help='seconds of fuzzing with new seeds')
    ap.add_argument('--jobs', type=int, default=1)
    ap.add_argument('--out', default='build/fuzz-diff')
    ap.add_argument('--shrink-seconds', type=int, default=300)
    ap.add_argument('--shrink', help='replay these seeds alone, shrink the failing ones into --out')
    ap.add_argument('--knob', action='append', help='generator setting NAME=V (see relaygen.DEFAULT_KNOBS)')
    ap.add_argument('--small', action='store_true', help='smaller programs (relaygen.SMALL_KNOBS)')
    args = ap.parse_args()
    tools = Tools(args)
    if args.shrink:
        return replay(args, tools)
    if args.fuzz:
        args.batch = min(args.batch, 10)
        return fuzz(args, tools)
    if not args.seeds:
        ap.error('give --seeds or --fuzz')
    return fixed(args, tools)


if __name__ == '__main__':
    sys.exit(main())
