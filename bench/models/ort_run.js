// ort_run.js: the CNN benchmark's ONNX Runtime peer (npm's onnxruntime-node,
// THREADS intra-op threads: environment, default 1). Runs MODEL.onnx (input
// "input", output "output") on INPUT.npy:
//
//   node ort_run.js NODE_DIR MODEL.onnx INPUT.npy check OUT.npy   writes the output
//   node ort_run.js NODE_DIR MODEL.onnx INPUT.npy time REPEAT     WARMUP calls (env,
//       default 5), then REPEAT timed ones: "time_ms: median=M min=A max=B n=REPEAT"
//
// NODE_DIR is where `npm install onnxruntime-node` put node_modules/. Only
// little-endian C-order float32 .npy files are read.
'use strict';

const fs = require('fs');
const path = require('path');

function usage() {
  process.stderr.write('usage: node ort_run.js NODE_DIR MODEL.onnx INPUT.npy (check OUT.npy | time REPEAT)\n');
  process.exit(2);
}

// readNpy(file): {shape, data: Float32Array} of a float32 .npy file.
function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(`${file}: not a .npy file`);
  const major = buf[6];
  const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const head = buf.toString('latin1', start, start + hlen);
  if (!head.includes("'descr': '<f4'") || !head.includes("'fortran_order': False")) {
    throw new Error(`${file}: not a C-order float32 array: ${head}`);
  }
  const shape = head.match(/'shape': \(([^)]*)\)/)[1].split(',').filter((s) => s.trim()).map(Number);
  const n = shape.reduce((a, b) => a * b, 1);
  const data = new Float32Array(n);
  for (let i = 0; i < n; i++) data[i] = buf.readFloatLE(start + hlen + 4 * i);
  return { shape, data };
}

// writeNpy(file, shape, data): a version 1 float32 .npy file.
function writeNpy(file, shape, data) {
  let head = `{'descr': '<f4', 'fortran_order': False, 'shape': (${shape.join(', ')}${shape.length === 1 ? ',' : ''}), }`;
  const total = Math.ceil((10 + head.length + 1) / 64) * 64;
  head = head.padEnd(total - 10 - 1, ' ') + '\n';
  const pre = Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0, (total - 10) & 255, (total - 10) >> 8]);
  const body = Buffer.alloc(4 * data.length);
  for (let i = 0; i < data.length; i++) body.writeFloatLE(data[i], 4 * i);
  fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(head, 'latin1'), body]));
}

async function main(argv) {
  if (argv.length !== 5 || (argv[3] !== 'check' && argv[3] !== 'time')) usage();
  const [nodeDir, model, inFile, mode, arg] = argv;
  const ort = require(require.resolve('onnxruntime-node', { paths: [path.resolve(nodeDir)] }));
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: Number(process.env.THREADS || 1),
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  const x = readNpy(inFile);
  const feeds = { input: new ort.Tensor('float32', x.data, x.shape) };
  if (mode === 'check') {
    const out = (await session.run(feeds)).output;
    writeNpy(arg, out.dims, out.data);
    return 0;
  }
  const repeat = Number(arg);
  if (!(repeat >= 1)) usage();
  const warmup = Number(process.env.WARMUP || 5);
  for (let i = 0; i < warmup; i++) await session.run(feeds);
  const times = [];
  for (let i = 0; i < repeat; i++) {
    const t0 = process.hrtime.bigint();
    await session.run(feeds);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  times.sort((a, b) => a - b);
  const med = repeat % 2 ? times[(repeat - 1) / 2] : (times[repeat / 2 - 1] + times[repeat / 2]) / 2;
  console.log(`time_ms: median=${med.toFixed(3)} min=${times[0].toFixed(3)} max=${times[repeat - 1].toFixed(3)} n=${repeat}`);
  return 0;
}

module.exports = { readNpy };

if (require.main === module) {
  main(process.argv.slice(2)).then((s) => process.exit(s), (e) => {
    process.stderr.write(`${e.stack || e}\n`);
    process.exit(1);
  });
}
