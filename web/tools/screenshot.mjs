// node web/tools/screenshot.mjs URL OUT.png [MOVES]
// The README's screenshot: opens the page at URL (a built page with a model),
// plays MOVES (default 3) moves for the person by clicking, each answered by
// the engine, selects a piece so that its destinations show, and saves OUT.png.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const [url, out, movesArg] = process.argv.slice(2);
if (!url || !out) {
  console.error('usage: node web/tools/screenshot.mjs URL OUT.png [MOVES]');
  process.exit(2);
}
const profile = mkdtempSync(join(tmpdir(), 'mz-shot-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.MARTIAN_ZERO_CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  viewport: { width: 1200, height: 860 },
});
try {
  const page = await context.newPage();
  await page.goto(url);
  await page.waitForFunction(() => window.mz && window.mz.ready && window.mz.net, null, { timeout: 60000 });
  const click = async (sq) => {
    const b = await page.locator(`#board .sq[data-sq="${sq}"]`).boundingBox();
    await page.mouse.click(b.x + b.width / 2, b.y + b.height / 2);
  };
  const human = await page.evaluate(() => window.mz.view.side_to_move);
  for (let i = 0; i < Number(movesArg || 3); i++) {
    const v = await page.evaluate(() => window.mz.view);
    if (v.outcome) break;
    // The person plays the move the network likes best among the first few legal ones.
    const m = v.legal[(i * 7) % v.legal.length];
    await click(m.from);
    await click(m.to);
    await page.waitForFunction((h) => !window.mz.busy && window.mz.view.side_to_move === h, human, { timeout: 60000 });
  }
  const v = await page.evaluate(() => window.mz.view);
  if (v.legal.length) await click(v.legal[v.legal.length - 1].from);
  await page.screenshot({ path: out });
  console.log(`screenshot: ${out}`);
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
