// The WebAssembly rules agree with the native ones (docs/web.md, "Tests"):
//   1. perft of the spec positions (rules/tests/data/*.perft, the numbers the
//      native tests pin) through the wasm module: every count (MZ_PERFT_MAX_LEAVES caps them);
//   2. the record of seeded random games (web/crate/src/fingerprint.rs: position
//      strings, hashes, legal moves and their policy indices, outcomes, input
//      planes' checksums, perft 2) from the wasm module and from the native
//      `web-fingerprint` binary must be identical;
//   3. the WebSession API: moves played and refused, undo, position strings,
//      and the bundle check's messages.
//
// node web/test/rules.mjs DIST_DIR NATIVE_FINGERPRINT_BIN [POSITIONS_PER_GAME]
// Prints one JSON summary line; exits 1 on the first disagreement.

import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import assert from 'node:assert/strict';

const [dist, nativeBin, perGameArg] = process.argv.slice(2);
if (!dist || !nativeBin) {
  console.error('usage: node web/test/rules.mjs DIST_DIR NATIVE_FINGERPRINT_BIN [POSITIONS_PER_GAME]');
  process.exit(2);
}
const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const MAX_LEAVES = Number(process.env.MZ_PERFT_MAX_LEAVES || 1e9);
const perGame = Number(perGameArg || 300);
const t0 = Date.now();

const wasm = await import(pathToFileURL(join(dist, 'pkg', 'martian_web.js')).href);
wasm.initSync({ module: readFileSync(join(dist, 'pkg', 'martian_web_bg.wasm')) });
const { WebSession, fingerprint, checkBundle } = wasm;

/** `[{position, counts: [[depth, count]]}]` of a perft data file (both formats). */
function perftData(file) {
  const out = [];
  for (const raw of readFileSync(file, 'utf8').split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    if (line.startsWith('position ')) {
      out.push({ position: line.slice(9).trim(), counts: [] });
    } else if (line.startsWith('perft ')) {
      const [, d, n] = line.split(/\s+/);
      out[out.length - 1].counts.push([Number(d), Number(n)]);
    } else {
      const [position, ...rest] = line.split(';');
      out.push({ position: position.trim(), counts: rest.map((p) => p.trim().split(/\s+/).map(Number)) });
    }
  }
  return out;
}

const summary = { perft_checks: 0, perft_leaves: 0, random_positions: 0, api_checks: 0 };

// 1. Perft.
for (const [game, file] of [['jetan', 'jetan.perft'], ['martian-chess', 'martian-chess.perft']]) {
  const data = perftData(join(repo, 'rules', 'tests', 'data', file));
  assert.ok(data.length >= 5, `${file}: too few positions`);
  for (const { position, counts } of data) {
    const s = new WebSession(game, '');
    s.setPosition(position);
    for (const [depth, count] of counts) {
      if (count > MAX_LEAVES) continue;
      const got = s.perft(depth);
      assert.equal(got, count, `${game} perft ${depth} of ${position}: wasm ${got}, pinned ${count}`);
      summary.perft_checks += 1;
      summary.perft_leaves += count;
    }
    s.free();
  }
}

// 2. Random positions, native against wasm.
for (const [game, seed] of [['jetan', 11], ['martian-chess', 12]]) {
  const native = execFileSync(nativeBin, [game, String(seed), String(perGame)], { encoding: 'utf8', maxBuffer: 1 << 28 });
  const mine = fingerprint(game, seed, perGame);
  const a = native.split('\n');
  const b = mine.split('\n');
  assert.equal(a.length, perGame + 1, `${game}: native record has ${a.length - 1} lines`);
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    assert.equal(b[i], a[i], `${game}: wasm and native differ at record line ${i}`);
  }
  summary.random_positions += perGame;
  summary[`${game}_finished_games`] = a.filter((l) => l.includes('Some(Outcome')).length;
}

// 3. The API the page uses.
{
  const s = new WebSession('martian-chess', '');
  const start = s.position();
  const legal = s.legalMoves();
  assert.equal(legal.length, 10);
  assert.throws(() => s.play('a1a2'), /illegal move/);
  assert.throws(() => s.play('zz'), /bad move text/);
  assert.equal(s.position(), start, 'a refused move changes nothing');
  const first = JSON.parse(s.viewJson()).legal[0];
  assert.equal(first.text, legal[0]);
  s.play(legal[0]);
  assert.deepEqual(s.moves(), [legal[0]]);
  const view = JSON.parse(s.viewJson());
  assert.equal(view.side_to_move, 'north');
  assert.deepEqual(view.last_move, [first.from, first.to]);
  assert.ok(s.undo());
  assert.equal(s.position(), start);
  assert.throws(() => s.setPosition('QQD1/QDP1 S 0'), /bad position string/);
  assert.throws(() => new WebSession('chess', ''), /unknown game/);
  const j = new WebSession('jetan', '');
  assert.equal(j.encode().length, 24 * 10 * 10);
  assert.equal(j.legalMoves().length, 78);
  const idx = j.legalMoves().map((m) => j.actionIndex(m));
  assert.equal(new Set(idx).size, 78, 'distinct action indices');
  assert.ok(idx.every((i) => i >= 0 && i < j.numActions()));
  summary.api_checks += 12;
  for (const game of ['jetan', 'martian-chess']) {
    const p = process.env[`MZ_BUNDLE_${game.replace('-', '_').toUpperCase()}`];
    if (!p) continue;
    const text = readFileSync(join(p, 'model.json'), 'utf8');
    const info = JSON.parse(checkBundle(text));
    assert.equal(info.game, game);
    const d = JSON.parse(text);
    assert.throws(() => checkBundle(JSON.stringify({ ...d, format_version: 2 })), /format version is 2/);
    assert.throws(() => checkBundle(JSON.stringify({ ...d, rules_spec: { ...d.rules_spec, version: '0' } })),
      /rules specification .* version 0/);
    assert.throws(() => checkBundle(JSON.stringify({ ...d, game: 'go' })), /"go"/);
    summary.api_checks += 4;
  }
}

summary.seconds = (Date.now() - t0) / 1000;
console.log(JSON.stringify(summary));
