// The page in a real headless Chromium (docs/web.md, "Tests"), driven by
// playwright-core: for each game, with a small exported bundle,
//   * ONNX Runtime Web's output for the reference positions agrees with
//     martian-zero's (the Rust network) within 1e-4;
//   * an illegal move is refused, the legal destinations are highlighted;
//   * a full game is played: the test moves by clicking (and sometimes by
//     dragging), the engine answers with legal moves within its budget, the
//     evaluation bar and the PV update, and the finished game shows its result;
//   * undo, load/copy a position, copy the move list;
//   * a bundle for the other game, and one with another rules version, are
//     refused with a clear message.
// Screenshots of both games go to ARTIFACTS_DIR.
//
// node web/test/browser.mjs DIST_DIR REFERENCE_JSON ARTIFACTS_DIR
// REFERENCE_JSON: {"<game>": {"positions": [...], "outputs": [[...], ...]}, ...}
// Chromium: $MARTIAN_ZERO_CHROMIUM or /usr/bin/chromium.

import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';
import { serve } from './serve.mjs';

const [dist, referencePath, artifacts] = process.argv.slice(2);
if (!dist || !referencePath || !artifacts) {
  console.error('usage: node web/test/browser.mjs DIST_DIR REFERENCE_JSON ARTIFACTS_DIR');
  process.exit(2);
}
const TOLERANCE = 1e-4;
const reference = JSON.parse(readFileSync(referencePath, 'utf8'));
mkdirSync(artifacts, { recursive: true });

// A bundle whose rules specification version differs from the page's.
{
  const src = join(dist, 'models', 'martian-chess');
  const dst = join(dist, 'models', 'test-other-rules');
  mkdirSync(dst, { recursive: true });
  const d = JSON.parse(readFileSync(join(src, 'model.json'), 'utf8'));
  d.rules_spec.version = '0';
  writeFileSync(join(dst, 'model.json'), JSON.stringify(d));
  copyFileSync(join(src, 'model.onnx'), join(dst, 'model.onnx'));
}
// A bundle whose ONNX file changed after model.json recorded its CRC-64.
{
  const src = join(dist, 'models', 'martian-chess');
  const dst = join(dist, 'models', 'test-damaged-onnx');
  mkdirSync(dst, { recursive: true });
  const d = JSON.parse(readFileSync(join(src, 'model.json'), 'utf8'));
  assert.match(d.onnx_crc64 || '', /^[0-9a-f]{16}$/, 'export_onnx.py records the ONNX checksum');
  copyFileSync(join(src, 'model.json'), join(dst, 'model.json'));
  const onnx = readFileSync(join(src, 'model.onnx'));
  onnx[onnx.length - 1] ^= 1;
  writeFileSync(join(dst, 'model.onnx'), onnx);
}

const server = await serve(dist);
const base = `http://127.0.0.1:${server.address().port}/`;
const profile = mkdtempSync(join(tmpdir(), 'mz-chromium-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.MARTIAN_ZERO_CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  viewport: { width: 1280, height: 900 },
});
const summary = { base };

function lcg(seed) {
  let x = BigInt(seed);
  return () => {
    x = (x * 6364136223846793005n + 1442695040888963407n) & 0xffffffffffffffffn;
    return Number(x >> 33n);
  };
}

async function openPage(query) {
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${base}?${query}`);
  await page.waitForFunction(() => window.mz && (window.mz.ready || window.mz.error), null, { timeout: 60000 });
  return { page, errors };
}

const view = (page) => page.evaluate(() => window.mz.view);
const message = (page) => page.locator('#message').textContent();

async function squareBox(page, sq) {
  const box = await page.locator(`#board .sq[data-sq="${sq}"]`).boundingBox();
  return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
}

async function clickSquare(page, sq) {
  const p = await squareBox(page, sq);
  await page.mouse.click(p.x, p.y);
}

async function dragMove(page, from, to) {
  const a = await squareBox(page, from);
  const b = await squareBox(page, to);
  await page.mouse.move(a.x, a.y);
  await page.mouse.down();
  await page.mouse.move((a.x + b.x) / 2, (a.y + b.y) / 2, { steps: 3 });
  await page.mouse.move(b.x, b.y, { steps: 3 });
  await page.mouse.up();
}

/** Waits until the engine is idle and it is the person's move or the game is over. */
async function engineDone(page, human, timeout) {
  await page.waitForFunction((h) => {
    const m = window.mz;
    return !m.busy && m.view && (m.view.outcome || m.view.side_to_move === h);
  }, human, { timeout });
}

async function checkOnnx(page, game) {
  const ref = reference[game];
  const r = await page.evaluate(async ({ positions, outputs }) => {
    const m = window.mz;
    const s = new m.WebSession(m.net.info.game, m.net.info.rules);
    const [c, h, w] = m.net.info.input_shape;
    const row = c * h * w;
    const input = new Float32Array(positions.length * row);
    positions.forEach((p, i) => {
      s.setPosition(p);
      input.set(s.encode(), i * row);
    });
    const out = await m.net.run(input, positions.length);
    const width = outputs[0].length;
    let max = 0;
    let spread = 0;
    for (let i = 0; i < positions.length; i++) {
      for (let j = 0; j < width; j++) {
        max = Math.max(max, Math.abs(out[i * width + j] - outputs[i][j]));
        spread = Math.max(spread, Math.abs(outputs[i][j] - outputs[0][j]));
      }
    }
    return { max, spread, rows: out.length / width, width, backend: m.net.backend };
  }, ref);
  assert.equal(r.rows, ref.positions.length, `${game}: ONNX Runtime Web returned ${r.rows} rows`);
  assert.ok(r.spread > 1e-3, `${game}: the reference outputs do not depend on the position (weak test)`);
  assert.ok(r.max <= TOLERANCE, `${game}: ONNX Runtime Web differs from martian-zero by ${r.max} > ${TOLERANCE}`);
  return r;
}

/** Plays one full game on the page; returns its figures. */
async function playGame(game, limitKind, limit, seed) {
  const { page, errors } = await openPage(`game=${game}&backend=wasm&human=first&limit_kind=${limitKind}&limit=${limit}`);
  assert.equal(await page.evaluate(() => window.mz.error), null, `${game}: ${await message(page)}`);
  assert.ok(await page.evaluate(() => !!window.mz.net), `${game}: no model loaded: ${await message(page)}`);
  const figures = { game, limit_kind: limitKind, limit };
  figures.onnx = await checkOnnx(page, game);

  let v = await view(page);
  const human = v.side_to_move;
  const start = v.position;

  // Legal destinations are highlighted; an illegal move is refused.
  const from = v.legal[0].from;
  const dests = new Set(v.legal.filter((m) => m.from === from).map((m) => m.to));
  await clickSquare(page, from);
  assert.equal(await page.locator('#board .sq.target').count(), dests.size, `${game}: highlighted destinations`);
  const froms = new Set(v.legal.map((m) => m.from));
  const bad = [...Array(v.width * v.height).keys()].find((sq) => !dests.has(sq) && !froms.has(sq));
  await clickSquare(page, bad);
  assert.match(await message(page), /not a legal move/, `${game}: illegal move message`);
  v = await view(page);
  assert.equal(v.position, start, `${game}: an illegal move changed the position`);
  assert.equal(v.moves.length, 0);
  // A square without a piece of the side to move is refused too.
  await clickSquare(page, bad);
  assert.match(await message(page), /no piece of yours|has no legal move/);

  // Load and copy a position; copy the move list; a bad position string is refused.
  await page.fill('#position', 'this is not a position');
  await page.click('#load-position');
  assert.match(await message(page), /bad position string/);
  await page.click('#copy-position');
  assert.equal(await page.evaluate(() => window.mz.clipboard), start);

  const rng = lcg(seed);
  let humanMoves = 0;
  let firstEngine = null;
  let midPosition = null;
  const snapshots = new Set();
  const t0 = Date.now();
  for (;;) {
    v = await view(page);
    if (v.outcome) break;
    assert.equal(v.side_to_move, human, `${game}: not the person's move after the engine's`);
    const m = v.legal[rng() % v.legal.length];
    const before = v.position;
    if (humanMoves % 4 === 3) {
      await dragMove(page, m.from, m.to);
    } else {
      await clickSquare(page, m.from);
      await clickSquare(page, m.to);
    }
    humanMoves += 1;
    const after = await view(page);
    assert.notEqual(after.position, before, `${game}: the move ${m.text} was not played (${await message(page)})`);
    assert.equal(after.moves[v.moves.length], m.text, `${game}: the move played is not the one clicked`);
    await engineDone(page, human, 60000);
    const panel = await page.evaluate(() => ({
      pv: document.getElementById('pv').textContent,
      win: document.getElementById('wdl-win').style.width,
      loss: document.getElementById('wdl-loss').style.width,
      rows: document.querySelectorAll('#top-moves tbody tr').length,
      info: document.getElementById('search-info').textContent,
      engine: window.mz.engineMoves.length,
    }));
    if (panel.engine > 0) {
      snapshots.add(`${panel.pv}|${panel.win}|${panel.loss}`);
      if (!firstEngine) {
        firstEngine = panel;
        midPosition = (await view(page)).position;
        assert.ok(panel.pv.trim().length > 0, `${game}: no PV after the engine's move`);
        assert.ok(panel.rows > 0, `${game}: no top moves`);
        assert.match(panel.win, /%$/, `${game}: the evaluation bar was not set`);
        await page.screenshot({ path: join(artifacts, `${game}-playing.png`) });
      }
    }
    if (humanMoves > 400) assert.fail(`${game}: no result after ${humanMoves} moves`);
  }
  figures.seconds = (Date.now() - t0) / 1000;
  v = await view(page);
  const result = page.locator('#result');
  assert.ok(await result.isVisible(), `${game}: the finished game shows no result`);
  const text = await result.textContent();
  assert.match(text, /wins|Draw/, `${game}: result text ${text}`);
  figures.result = text;
  figures.plies = v.moves.length;
  await page.screenshot({ path: join(artifacts, `${game}-finished.png`) });

  // The engine's moves: legal (replayed through a fresh session), within budget.
  const engine = await page.evaluate(() => window.mz.engineMoves);
  assert.ok(engine.length > 0, `${game}: the engine never moved`);
  const replay = await page.evaluate(({ moves, start }) => {
    const m = window.mz;
    const s = new m.WebSession(m.net.info.game, m.net.info.rules);
    s.setPosition(start);
    for (const mv of moves) s.play(mv);
    return s.position();
  }, { moves: v.moves, start });
  assert.equal(replay, v.position, `${game}: the move list does not replay`);
  if (limitKind === 'visits') {
    for (const e of engine) assert.ok(e.visits >= limit || v.outcome, `${game}: engine move with ${e.visits} visits < ${limit}`);
  } else {
    // One batch may start just before the time is up.
    const worst = Math.max(...engine.map((e) => e.ms));
    assert.ok(worst <= limit + 1000, `${game}: an engine move took ${worst} ms for a ${limit} ms budget`);
  }
  figures.engine_moves = engine.length;
  figures.engine_ms_max = Math.round(Math.max(...engine.map((e) => e.ms)));
  figures.engine_visits_min = Math.min(...engine.map((e) => e.visits));
  figures.panel_states = snapshots.size;
  assert.ok(snapshots.size > 1 || engine.length === 1, `${game}: the evaluation bar and PV never changed`);

  // Copy the move list; undo takes back the person's move and the engine's reply.
  await page.click('#copy-moves');
  assert.equal(await page.evaluate(() => window.mz.clipboard), v.moves.join(' '));
  const n = v.moves.length;
  await page.click('#undo');
  const u = await view(page);
  assert.ok(u.moves.length < n && u.side_to_move === human && !u.outcome, `${game}: undo`);
  // Load a position string (one from the game; a finished Jetan game's string
  // lacks the captured Princess or Chief and does not load, by the spec).
  await page.fill('#position', midPosition);
  await page.click('#load-position');
  assert.match(await message(page), /position loaded/);
  await engineDone(page, human, 60000);
  const loaded = await view(page);
  assert.ok(loaded.position === midPosition || loaded.moves.length === 1, `${game}: load position`);
  assert.ok(!(await result.isVisible()) || loaded.outcome);
  assert.deepEqual(errors, [], `${game}: page errors`);
  await page.close();
  return figures;
}

/**
 * A strength level (issue 35): the page lists the wasm module's levels; at
 * level 2 every engine move is searched with that level's visits and played
 * (a legal move, drawn at its temperature); the top moves show win bars.
 */
async function levelGame(game, number, seed) {
  const { page, errors } = await openPage(`game=${game}&backend=wasm&human=first&level=${number}`);
  assert.ok(await page.evaluate(() => !!window.mz.net), `${game}: no model loaded: ${await message(page)}`);
  const levels = await page.evaluate(() => window.mz.levels);
  assert.ok(levels.length >= 3, `${game}: levels ${JSON.stringify(levels)}`);
  assert.equal(await page.locator('#level option').count(), levels.length + 1, `${game}: the level menu`);
  const want = levels.find((l) => l.number === number);
  const rng = lcg(seed);
  let v = await view(page);
  const human = v.side_to_move;
  let bars = 0;
  for (let i = 0; i < 6; i++) {
    v = await view(page);
    if (v.outcome) break;
    const m = v.legal[rng() % v.legal.length];
    await clickSquare(page, m.from);
    await clickSquare(page, m.to);
    await engineDone(page, human, 60000);
    bars = Math.max(bars, await page.locator('#top-moves tbody .winbar').count());
  }
  const engine = await page.evaluate(() => window.mz.engineMoves);
  assert.ok(engine.length > 0, `${game}: the engine never moved at level ${number}`);
  for (const e of engine) {
    assert.equal(e.level, number, `${game}: an engine move without its level`);
    assert.ok(e.visits === want.visits || e.visits === 0, `${game}: level ${number} searched ${e.visits} visits, not ${want.visits}`);
  }
  assert.ok(bars > 0, `${game}: no win bar in the top moves`);
  v = await view(page);
  assert.match(await message(page), new RegExp(`level ${number}|wins|draw`, 'i'));
  assert.deepEqual(errors, [], `${game}: page errors`);
  await page.close();
  return { game, level: number, visits: want.visits, engine_moves: engine.length, plies: v.moves.length };
}

async function mismatch(query, pattern, what) {
  const { page } = await openPage(query);
  await page.waitForFunction(() => window.mz.ready, null, { timeout: 60000 });
  const text = await message(page);
  assert.match(text, pattern, `${what}: message ${text}`);
  assert.ok(await page.evaluate(() => window.mz.net === null), `${what}: the bundle was used`);
  await page.close();
  return text;
}

/** Local files: a bundle of the other game is refused, the right one loads; New game restarts. */
async function localFiles() {
  const { page } = await openPage('game=martian-chess&backend=wasm');
  await page.waitForFunction(() => window.mz.ready, null, { timeout: 60000 });
  const files = (g) => ['model.json', 'model.onnx'].map((f) => join(dist, 'models', g, f));
  await page.setInputFiles('#model-files', files('jetan'));
  await page.waitForFunction(() => /jetan model/.test(document.getElementById('message').textContent), null,
    { timeout: 60000 });
  const refused = await message(page);
  await page.setInputFiles('#model-files', files('martian-chess'));
  await page.waitForFunction(() => /loaded the chosen files/.test(document.getElementById('message').textContent),
    null, { timeout: 60000 });
  assert.match(await page.locator('#model-info').textContent(), /model\.json/);
  const v = await view(page);
  await clickSquare(page, v.legal[0].from);
  await clickSquare(page, v.legal[0].to);
  await page.waitForFunction(() => !window.mz.busy && window.mz.view.moves.length === 2, null, { timeout: 60000 });
  await page.click('#new-game');
  const n = await view(page);
  assert.equal(n.moves.length, 0, 'new game');
  assert.equal(n.position, v.position, 'new game starts from the initial position');
  await page.close();
  return refused;
}

try {
  summary.games = [];
  summary.games.push(await playGame('martian-chess', 'time', 150, 7));
  summary.games.push(await playGame('jetan', 'visits', 24, 8));
  summary.level = await levelGame('martian-chess', 2, 9);
  summary.wrong_game = await mismatch('game=jetan&backend=wasm&model=models/martian-chess/',
    /is a martian-chess model, but the game chosen is jetan/, 'bundle for the other game');
  summary.wrong_rules = await mismatch('game=martian-chess&backend=wasm&model=models/test-other-rules/',
    /rules specification .* version 0; this page implements/, 'bundle of another rules version');
  summary.damaged_onnx = await mismatch('game=martian-chess&backend=wasm&model=models/test-damaged-onnx/',
    /model\.onnx: its CRC-64 is [0-9a-f]{16}, model\.json records [0-9a-f]{16}/, 'ONNX file changed after export');
  summary.local_files_wrong_game = await localFiles();
  summary.wrong_url = await mismatch('game=martian-chess&backend=wasm&model=models/none/', /HTTP 404/, 'missing bundle');
  summary.screenshots = ['martian-chess-playing.png', 'martian-chess-finished.png', 'jetan-playing.png', 'jetan-finished.png']
    .map((f) => join(artifacts, f));
  console.log(JSON.stringify(summary));
} finally {
  await context.close();
  server.close();
  rmSync(profile, { recursive: true, force: true });
}
