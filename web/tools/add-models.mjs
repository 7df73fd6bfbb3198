// node web/tools/add-models.mjs OUT_MODELS_DIR BUNDLE_DIR...
// Copies each bundle's model.json and ONNX file into OUT_MODELS_DIR/<game>[-n]/
// and writes OUT_MODELS_DIR/index.json: [{name, game, path}], the page's model list.
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [out, ...bundles] = process.argv.slice(2);
const index = [];
const used = new Map();
for (const dir of bundles) {
  const jsonPath = join(dir, 'model.json');
  let desc;
  try {
    desc = JSON.parse(readFileSync(jsonPath, 'utf8'));
  } catch (e) {
    console.error(`add-models: ${jsonPath}: ${e.message}`);
    process.exit(1);
  }
  const onnx = (desc.files && desc.files.onnx) || 'model.onnx';
  if (!existsSync(join(dir, onnx))) {
    console.error(`add-models: ${join(dir, onnx)} missing: run tools/export_onnx.py ${dir}`);
    process.exit(1);
  }
  const game = String(desc.game);
  const n = (used.get(game) || 0) + 1;
  used.set(game, n);
  const name = n === 1 ? game : `${game}-${n}`;
  mkdirSync(join(out, name), { recursive: true });
  copyFileSync(jsonPath, join(out, name, 'model.json'));
  copyFileSync(join(dir, onnx), join(out, name, onnx));
  const step = desc.training ? desc.training.step : '?';
  const arch = desc.architecture ? `${desc.architecture.blocks}x${desc.architecture.channels}` : '';
  index.push({ name: `${name} (${arch}, step ${step})`, game, path: `models/${name}/` });
}
writeFileSync(join(out, 'index.json'), `${JSON.stringify(index, null, 1)}\n`);
console.log(`add-models: ${index.map((m) => m.path).join(', ')}`);
