// ort_profile.js: where ONNX Runtime's time goes, node by node, to set
// beside `relayc run --profile` (THREADS intra-op threads: environment,
// default 1):
//
//   node ort_profile.js NODE_DIR MODEL.onnx INPUT.npy [REPEAT]
//
// Runs MODEL.onnx (input "input") REPEAT times (default 100) with
// ONNX Runtime's profiler on, then prints each node in execution order:
// the median and the minimum of its kernel time over the runs after the
// first 10 (us; on a noisy host the minimum compares best),
// its operator (as ONNX Runtime ran it: after its graph optimizations,
// Conv nodes carry their fused activations and NCHWc layouts), its name
// and output shape; then the sum of the medians and the median of whole
// runs. The profiler's JSON file goes to the system's temporary
// directory and is removed.
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const { readNpy } = require('./ort_run.js');

function median(v) {
  const s = [...v].sort((a, b) => a - b);
  const n = s.length;
  return n === 0 ? 0 : n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

async function main(argv) {
  if (argv.length < 3 || argv.length > 4) {
    process.stderr.write('usage: node ort_profile.js NODE_DIR MODEL.onnx INPUT.npy [REPEAT]\n');
    return 2;
  }
  const [nodeDir, model, inFile] = argv;
  const repeat = Number(argv[3] || 100);
  if (!(repeat >= 11)) throw new Error('REPEAT must be at least 11 (the first 10 runs are left out)');
  const ort = require(require.resolve('onnxruntime-node', { paths: [path.resolve(nodeDir)] }));
  const prefix = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ortprof-')), 'p');
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: Number(process.env.THREADS || 1),
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
    enableProfiling: true,
    profileFilePrefix: prefix,
  });
  const x = readNpy(inFile);
  const feeds = { input: new ort.Tensor('float32', x.data, x.shape) };
  for (let i = 0; i < repeat; i++) await session.run(feeds);
  session.endProfiling();
  const dir = path.dirname(prefix);
  const file = fs.readdirSync(dir).map((f) => path.join(dir, f)).find((f) => f.endsWith('.json'));
  if (!file) throw new Error('ONNX Runtime wrote no profile');
  const events = JSON.parse(fs.readFileSync(file, 'utf8'));
  fs.rmSync(dir, { recursive: true, force: true });
  const nodes = new Map();
  const runs = [];
  for (const e of events) {
    if (e.cat === 'Session' && e.name === 'model_run') runs.push(e.dur);
    if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time')) continue;
    const name = e.name.slice(0, -'_kernel_time'.length);
    if (!nodes.has(name)) nodes.set(name, { op: e.args.op_name, shape: JSON.stringify(e.args.output_type_shape || ''), dur: [] });
    nodes.get(name).dur.push(e.dur);
  }
  let sum = 0, sumMin = 0;
  console.log('median_us     min_us  op                    node / output');
  for (const [name, n] of nodes) {
    const d = n.dur.slice(10);
    const m = median(d), lo = Math.min(...d);
    sum += m;
    sumMin += lo;
    console.log(`${m.toFixed(1).padStart(9)}  ${lo.toFixed(1).padStart(9)}  ${String(n.op).padEnd(20)}  ${name} ${n.shape}`);
  }
  console.log(`sum of the nodes' medians: ${(sum / 1000).toFixed(3)} ms; of their minimums: ${(sumMin / 1000).toFixed(3)} ms; median run: ${(median(runs.slice(10)) / 1000).toFixed(3)} ms`);
  return 0;
}

main(process.argv.slice(2)).then((s) => process.exit(s), (e) => {
  process.stderr.write(`${e.stack || e}\n`);
  process.exit(1);
});
