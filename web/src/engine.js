// The network (ONNX Runtime Web) and the search loop.
//
// The search itself runs in WebAssembly (martian-search's PUCT inside the
// martian-web module); this file only moves batches between it and ONNX
// Runtime: gather leaves -> one inference call on the whole batch -> apply
// the raw output rows. See docs/web.md.

import * as ort from './ort/ort.webgpu.bundle.min.mjs';
import { checkBundle } from './pkg/martian_web.js';

ort.env.wasm.wasmPaths = new URL('./ort/', import.meta.url).href;
// Threads need a cross-origin isolated page (COOP/COEP headers, docs/web.md).
ort.env.wasm.numThreads = globalThis.crossOriginIsolated ? Math.min(4, navigator.hardwareConcurrency || 1) : 1;

/** Leaves per network call. */
export const LEAVES_PER_BATCH = 16;

/** A loaded bundle: its description (checked against the compiled rules) and an inference session. */
export class Network {
  constructor(info, session, backend, source) {
    this.info = info;
    this.session = session;
    this.backend = backend;
    this.source = source;
    this.inputName = session.inputNames.includes(info.onnx_names[0]) ? info.onnx_names[0] : session.inputNames[0];
    this.outputName = session.outputNames.includes(info.onnx_names[1]) ? info.onnx_names[1] : session.outputNames[0];
  }

  /**
   * Runs the network on `rows` encoded positions (`Float32Array` of
   * rows x planes x height x width) and returns the raw output rows
   * (`Float32Array`, rows x (numActions + 3)).
   */
  async run(input, rows) {
    const [c, h, w] = this.info.input_shape;
    const tensor = new ort.Tensor('float32', input, [rows, c, h, w]);
    const result = await this.session.run({ [this.inputName]: tensor });
    const out = result[this.outputName];
    const data = out.data instanceof Float32Array ? out.data : Float32Array.from(out.data);
    tensor.dispose?.();
    out.dispose?.();
    return data;
  }
}

/** Which execution providers to try: WebGPU when the browser has an adapter, then WebAssembly. */
async function providers(requested) {
  if (requested === 'wasm') return ['wasm'];
  try {
    if (navigator.gpu && (await navigator.gpu.requestAdapter())) return ['webgpu', 'wasm'];
  } catch (_) {
    // No adapter: WebAssembly only.
  }
  return ['wasm'];
}

/**
 * Loads a bundle from `modelJsonText` and the ONNX bytes that `fetchOnnx(fileName)` returns.
 * Throws an Error with a message for the page when the bundle does not fit the compiled rules.
 */
export async function loadNetwork(modelJsonText, fetchOnnx, source, backend) {
  let info;
  try {
    info = JSON.parse(checkBundle(modelJsonText));
  } catch (e) {
    throw new Error(`${source}: ${e.message}`);
  }
  const bytes = await fetchOnnx(info.onnx_file);
  if (info.onnx_crc64) {
    const got = crc64Hex(bytes);
    if (got !== info.onnx_crc64) {
      throw new Error(`${source}: ${info.onnx_file}: its CRC-64 is ${got}, model.json records ${info.onnx_crc64}: `
        + 'the file is corrupt or was changed after it was written');
    }
  }
  const eps = await providers(backend);
  let session;
  let used = eps[0];
  try {
    session = await ort.InferenceSession.create(bytes, { executionProviders: eps });
  } catch (e) {
    if (eps[0] === 'wasm') throw new Error(`${source}: ONNX Runtime cannot load ${info.onnx_file}: ${e.message}`);
    session = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'] });
    used = 'wasm';
  }
  return new Network(info, session, used, source);
}

/** Loads a bundle folder by URL (`.../bundle/` with model.json and model.onnx). */
export async function loadNetworkFromUrl(url, backend) {
  const base = new URL(url.endsWith('/') ? url : `${url}/`, location.href);
  const get = async (name, kind) => {
    const r = await fetch(new URL(name, base));
    if (!r.ok) throw new Error(`${new URL(name, base).href}: HTTP ${r.status} ${r.statusText}`);
    return kind === 'text' ? r.text() : new Uint8Array(await r.arrayBuffer());
  };
  const text = await get('model.json', 'text');
  return loadNetwork(text, (f) => get(f, 'bytes'), base.href, backend);
}

/** Loads a bundle from local files (an `<input type=file multiple>`'s list: model.json and the .onnx file). */
export async function loadNetworkFromFiles(files, backend) {
  const list = Array.from(files);
  const json = list.find((f) => f.name.endsWith('.json'));
  if (!json) throw new Error('choose the bundle\'s model.json together with its model.onnx');
  const text = await json.text();
  return loadNetwork(text, async (name) => {
    const onnx = list.find((f) => f.name === name) || list.find((f) => f.name.endsWith('.onnx'));
    if (!onnx) throw new Error(`choose ${name} together with model.json`);
    return new Uint8Array(await onnx.arrayBuffer());
  }, `${json.name} (local file)`, backend);
}

// CRC-64/ECMA-182 (polynomial 0x42F0E1EBA9EA3693, not reflected, init 0, no final xor;
// b"123456789" -> 6c40df5f0b497347), as model.json's onnx_crc64 records it
// (tools/export_onnx.py). The 64-bit state is kept in two unsigned 32-bit halves.
const CRC64_TABLE = (() => {
  const hi = new Uint32Array(256);
  const lo = new Uint32Array(256);
  const poly = 0x42F0E1EBA9EA3693n;
  const mask = 0xFFFFFFFFFFFFFFFFn;
  for (let i = 0; i < 256; i++) {
    let c = BigInt(i) << 56n;
    for (let k = 0; k < 8; k++) c = (c & (1n << 63n)) ? ((c << 1n) ^ poly) & mask : (c << 1n) & mask;
    hi[i] = Number(c >> 32n);
    lo[i] = Number(c & 0xFFFFFFFFn);
  }
  return { hi, lo };
})();

/** CRC-64/ECMA-182 of `bytes` (a Uint8Array) as 16 lowercase hex digits. */
export function crc64Hex(bytes) {
  const { hi: th, lo: tl } = CRC64_TABLE;
  let hi = 0;
  let lo = 0;
  for (let i = 0; i < bytes.length; i++) {
    const idx = ((hi >>> 24) ^ bytes[i]) & 0xFF;
    hi = (((hi << 8) | (lo >>> 24)) ^ th[idx]) >>> 0;
    lo = ((lo << 8) ^ tl[idx]) >>> 0;
  }
  return hi.toString(16).padStart(8, '0') + lo.toString(16).padStart(8, '0');
}

function softmax3(a, b, c) {
  const m = Math.max(a, b, c);
  const [x, y, z] = [Math.exp(a - m), Math.exp(b - m), Math.exp(c - m)];
  const s = x + y + z;
  return [x / s, y / s, z / s];
}

/** The network's (win, draw, loss) probabilities for the side to move of `session`'s position. */
export async function rootWdl(net, session) {
  const out = await net.run(session.encode(), 1);
  const n = net.info.num_actions;
  return softmax3(out[n], out[n + 1], out[n + 2]);
}

/**
 * Searches `session`'s position until `limit` is reached: `{kind: 'visits', n}`
 * (completed simulations) or `{kind: 'time', ms}` (stops starting batches once
 * the time is up). Calls `onProgress(report)` now and then; `shouldStop()`
 * abandons it (the result is then null). Returns the final report (see
 * martian-web's SearchReport) with `elapsed_ms` added.
 */
export async function think(net, session, limit, { onProgress, shouldStop, seed } = {}) {
  const t0 = performance.now();
  session.searchBegin(LEAVES_PER_BATCH, 1.25, seed ?? (Math.random() * 2 ** 32) >>> 0);
  let lastReport = t0;
  let idle = 0;
  for (;;) {
    const visits = session.searchVisits();
    const elapsed = performance.now() - t0;
    if (limit.kind === 'visits' ? visits >= limit.n : elapsed >= limit.ms && visits > 0) break;
    if (shouldStop && shouldStop()) return null;
    const want = limit.kind === 'visits' ? Math.min(LEAVES_PER_BATCH, limit.n - visits) : LEAVES_PER_BATCH;
    const k = session.searchGather(Math.max(1, want));
    if (k === 0) {
      // Every selection ended in a known value (or the root's game is over).
      if (session.searchVisits() === visits && ++idle > 64) break;
      continue;
    }
    idle = 0;
    const out = await net.run(session.searchInput(), k);
    // Superseded while the network ran (undo, new game, another search): leave the session alone.
    if (shouldStop && shouldStop()) return null;
    session.searchApply(out);
    const now = performance.now();
    if (onProgress && now - lastReport > 150) {
      lastReport = now;
      onProgress(JSON.parse(session.searchReportJson()));
    }
  }
  if (shouldStop && shouldStop()) return null;
  const report = JSON.parse(session.searchReportJson());
  if (report) report.elapsed_ms = performance.now() - t0;
  return report;
}
