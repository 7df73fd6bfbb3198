// The page: board, controls and engine panel. All rules come from the
// martian-web WebAssembly module (legal moves, play, result, position
// strings); this file draws what it reports and turns clicks into move text.

import init, { WebSession, rulesVersions, levelsJson } from './pkg/martian_web.js';
import { loadNetworkFromUrl, loadNetworkFromFiles, rootWdl, think } from './engine.js';

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);

const JETAN_ABBREV = {
  Chief: 'Ch', Princess: 'Pr', Flier: 'Fl', Dwar: 'Dw', Padwar: 'Pd', Warrior: 'Wa', Thoat: 'Th', Panthan: 'Pa',
};
const PIPS = { Pawn: 1, Drone: 2, Queen: 3 };

/** Page state. `window.mz` exposes it to people debugging and to the browser tests. */
const mz = {
  ready: false,
  session: null,
  net: null,
  models: [],
  view: null,
  selected: null,
  flipped: false,
  busy: false,
  stopRequested: false,
  searchToken: 0,
  lastSearch: null,
  lastWdl: null,
  engineMoves: [],
  levels: [],
  message: '',
  error: null,
};
window.mz = mz;
// For the browser tests and for debugging in the console: the rules module's session class.
mz.WebSession = WebSession;

function say(text, isError = false) {
  mz.message = text;
  const m = $('message');
  m.textContent = text;
  m.className = isError ? 'error' : '';
}

function sideOf(name) {
  return name === 'south' ? 0 : 1;
}

/** Which seats the person plays: a set of 'south' / 'north'. */
function humanSeats() {
  const v = $('human').value;
  const first = mz.firstSeat;
  const second = first === 'south' ? 'north' : 'south';
  if (v === 'first') return new Set([first]);
  if (v === 'second') return new Set([second]);
  if (v === 'both') return new Set(['south', 'north']);
  return new Set();
}

function bottomSeat() {
  const seats = humanSeats();
  let bottom = seats.size === 1 ? [...seats][0] : 'south';
  if (mz.flipped) bottom = bottom === 'south' ? 'north' : 'south';
  return bottom;
}

/** Square name for index `sq` (`a1` = 0). */
function squareName(view, sq) {
  const file = sq % view.width;
  const rank = Math.floor(sq / view.width) + 1;
  return String.fromCharCode(97 + file) + rank;
}

function render() {
  const view = JSON.parse(mz.session.viewJson());
  mz.view = view;
  const board = $('board');
  const size = Math.floor(Math.min(600 / view.height, 640 / view.width, 72));
  board.style.setProperty('--sq', `${size}px`);
  board.style.gridTemplateColumns = `repeat(${view.width}, ${size}px)`;
  board.replaceChildren();
  const cells = new Map(view.cells.map((c) => [c.sq, c]));
  const zones = new Map(view.zones);
  const targets = new Map();
  if (mz.selected !== null) {
    for (const m of view.legal) if (m.from === mz.selected) targets.set(m.to, m);
  }
  const southBottom = bottomSeat() === 'south';
  for (let r = 0; r < view.height; r++) {
    for (let c = 0; c < view.width; c++) {
      const rank = southBottom ? view.height - r : r + 1;
      const file = southBottom ? c : view.width - 1 - c;
      const sq = file + view.width * (rank - 1);
      const d = document.createElement('div');
      d.className = `sq ${(file + rank) % 2 === 0 ? 'dark' : 'light'}`;
      d.dataset.sq = sq;
      d.dataset.name = squareName(view, sq);
      d.title = d.dataset.name;
      if (zones.has(sq)) d.classList.add(`zone-${zones.get(sq)}`);
      // The Martian Chess canal lies between ranks 4 and 5.
      if (view.game === 'martian-chess' && r < view.height - 1) {
        const nextRank = southBottom ? rank - 1 : rank + 1;
        if ((rank === 5 && nextRank === 4) || (rank === 4 && nextRank === 5)) d.classList.add('canal-below');
      }
      if (view.last_move && (view.last_move[0] === sq || view.last_move[1] === sq)) d.classList.add('last');
      if (mz.selected === sq) d.classList.add('selected');
      if (targets.has(sq)) {
        d.classList.add('target');
        if (targets.get(sq).note === 'Escape') d.classList.add('escape');
      }
      const cell = cells.get(sq);
      if (cell) {
        d.classList.add('occupied');
        d.title = `${d.dataset.name}: ${cell.name}${view.game === 'jetan' ? ` (${view.side_names[sideOf(cell.owner)]})` : ''}`;
        d.appendChild(pieceElement(view, cell));
      }
      if (c === 0) {
        d.appendChild(Object.assign(document.createElement('span'), { className: 'coord', textContent: String(rank) }));
      }
      if (r === view.height - 1) {
        const letter = String.fromCharCode(97 + file);
        d.appendChild(Object.assign(document.createElement('span'), { className: 'coord file', textContent: letter }));
      }
      board.appendChild(d);
    }
  }
  renderPlayers(view);
  renderStatus(view);
  $('position').value = view.position;
  const list = $('move-list');
  list.replaceChildren(...view.moves.map((m) => Object.assign(document.createElement('li'), { textContent: m })));
  const res = $('result');
  if (view.outcome) {
    const o = view.outcome;
    res.textContent = o.winner ? `${o.winner_name} wins: ${o.reason}` : `Draw: ${o.reason}`;
    res.hidden = false;
  } else {
    res.hidden = true;
  }
  $('undo').disabled = view.moves.length === 0;
}

function pieceElement(view, cell) {
  const p = document.createElement('div');
  if (view.game === 'jetan') {
    p.className = `piece jetan ${cell.owner} ${cell.name.toLowerCase()}`;
    p.textContent = JETAN_ABBREV[cell.name] || cell.letter;
  } else {
    p.className = `pyramid p${PIPS[cell.name]}`;
  }
  p.dataset.piece = cell.letter;
  return p;
}

function renderPlayers(view) {
  const bottom = bottomSeat();
  const top = bottom === 'south' ? 'north' : 'south';
  const seats = humanSeats();
  for (const [id, seat] of [['player-top', top], ['player-bottom', bottom]]) {
    const e = $(id);
    const who = seats.has(seat) ? 'you' : mz.net ? 'engine' : 'no engine loaded';
    e.textContent = `${view.side_names[sideOf(seat)]} (${who})`;
    e.classList.toggle('to-move', !view.outcome && view.side_to_move === seat);
  }
}

function renderStatus(view) {
  const rows = [['To move', view.outcome ? '-' : view.side_names[sideOf(view.side_to_move)]], ['Ply', String(view.ply)]];
  for (const s of view.status) rows.push([s.label, s.value]);
  $('status').tBodies[0].replaceChildren(...rows.map(([a, b]) => {
    const tr = document.createElement('tr');
    tr.append(Object.assign(document.createElement('td'), { textContent: a }),
      Object.assign(document.createElement('td'), { textContent: b }));
    return tr;
  }));
}

function renderSearch(report, wdl) {
  if (wdl) {
    mz.lastWdl = wdl;
    const [w, d, l] = wdl;
    $('wdl-win').style.width = `${(100 * w).toFixed(1)}%`;
    $('wdl-draw').style.width = `${(100 * d).toFixed(1)}%`;
    $('wdl-loss').style.width = `${(100 * l).toFixed(1)}%`;
    const side = mz.view ? mz.view.side_names[sideOf(mz.view.side_to_move)] : '';
    $('wdl-text').textContent = `${side} to move: win ${(100 * w).toFixed(1)}%, draw ${(100 * d).toFixed(1)}%, loss ${(100 * l).toFixed(1)}% (network)`;
  }
  if (!report) return;
  mz.lastSearch = report;
  const ms = report.elapsed_ms !== undefined ? `, ${Math.round(report.elapsed_ms)} ms` : '';
  $('search-info').textContent = `search: ${report.visits} visits, value ${report.value.toFixed(3)} for the side to move, ` +
    `${report.evaluations} positions in ${report.batches} network calls${ms}`;
  $('pv').textContent = report.pv.join(' ');
  const body = $('top-moves').tBodies[0];
  body.replaceChildren(...report.moves.slice(0, 8).map((m) => {
    const tr = document.createElement('tr');
    for (const t of [m.text, String(m.visits), m.prior.toFixed(3), m.q === null ? '-' : m.q.toFixed(3)]) {
      tr.appendChild(Object.assign(document.createElement('td'), { textContent: t }));
    }
    // The win bar: Q as an expected score (Q + 1) / 2 for the side to move.
    const td = document.createElement('td');
    if (m.q !== null) {
      const score = (m.q + 1) / 2;
      const bar = Object.assign(document.createElement('span'), { className: 'winbar', title: `${(100 * score).toFixed(1)}%` });
      bar.style.width = `${(100 * score).toFixed(1)}%`;
      td.appendChild(bar);
    }
    tr.appendChild(td);
    return tr;
  }));
}

/** The chosen strength level (`{number, visits, temperature}`), or null for full strength. */
function level() {
  const n = Number($('level').value);
  return mz.levels.find((l) => l.number === n) ?? null;
}

function limit() {
  const l = level();
  if (l) return { kind: 'visits', n: l.visits };
  const n = Math.max(1, Math.floor(Number($('limit').value) || 1));
  return $('limit-kind').value === 'time' ? { kind: 'time', ms: n } : { kind: 'visits', n };
}

/** Searches the current position; returns the report, or null when it was superseded. */
async function search() {
  const token = ++mz.searchToken;
  mz.busy = true;
  try {
    const wdl = await rootWdl(mz.net, mz.session);
    if (token !== mz.searchToken) return null;
    renderSearch(null, wdl);
    const report = await think(mz.net, mz.session, limit(), {
      onProgress: (r) => token === mz.searchToken && renderSearch(r),
      shouldStop: () => token !== mz.searchToken,
    });
    if (token !== mz.searchToken) return null;
    renderSearch(report);
    return report;
  } finally {
    if (token === mz.searchToken) mz.busy = false;
  }
}

/** Lets the engine move while it is its turn. */
async function engineTurn(force = false) {
  if (!mz.net || mz.busy) return;
  for (;;) {
    const view = mz.view;
    if (view.outcome) return;
    if (!force && humanSeats().has(view.side_to_move)) return;
    force = false;
    say('engine thinking…');
    let report;
    try {
      report = await search();
    } catch (e) {
      mz.busy = false;
      say(`engine error: ${e.message}`, true);
      return;
    }
    if (!report) return;
    if (!report.best) {
      say('the engine found no move');
      return;
    }
    // A level plays a move drawn from the search at its temperature (the best at 0).
    const l = level();
    const move = l ? (mz.session.searchSample(l.temperature) ?? report.best) : report.best;
    mz.session.play(move);
    mz.engineMoves.push({ move, visits: report.visits, ms: report.elapsed_ms, level: l ? l.number : null });
    mz.selected = null;
    render();
    const how = l ? `level ${l.number}, ` : '';
    say(`engine played ${move} (${how}${report.visits} visits, ${Math.round(report.elapsed_ms)} ms)`);
    await new Promise((r) => setTimeout(r, 0));
  }
}

function stopSearch() {
  mz.searchToken++;
  mz.busy = false;
}

function tryMove(from, to) {
  const view = mz.view;
  const m = view.legal.find((x) => x.from === from && x.to === to);
  const text = squareName(view, from) + squareName(view, to);
  if (!m) {
    say(`${text} is not a legal move`, true);
    mz.selected = null;
    render();
    return false;
  }
  try {
    mz.session.play(m.text);
  } catch (e) {
    say(e.message, true);
    return false;
  }
  mz.selected = null;
  render();
  say(`you played ${m.text}${m.note ? ` (${m.note})` : ''}`);
  engineTurn();
  return true;
}

function onSquare(sq, dragging) {
  const view = mz.view;
  if (!view) return;
  if (view.outcome) {
    say('the game is over; start a new game or undo', true);
    return;
  }
  if (mz.busy) {
    say('the engine is thinking', true);
    return;
  }
  if (!humanSeats().has(view.side_to_move)) {
    say(`it is ${view.side_names[sideOf(view.side_to_move)]}'s move, played by the engine`, true);
    return;
  }
  const ownMoves = view.legal.filter((m) => m.from === sq);
  if (mz.selected === null || (ownMoves.length > 0 && mz.selected !== sq && !dragging &&
      !view.legal.some((m) => m.from === mz.selected && m.to === sq))) {
    if (ownMoves.length === 0) {
      const occupied = view.cells.some((c) => c.sq === sq);
      say(occupied ? `${squareName(view, sq)} has no legal move` : `no piece of yours on ${squareName(view, sq)}`, true);
      return;
    }
    mz.selected = sq;
    render();
    return;
  }
  if (mz.selected === sq) {
    if (!dragging) {
      mz.selected = null;
      render();
    }
    return;
  }
  tryMove(mz.selected, sq);
}

function squareAt(ev) {
  const el = document.elementFromPoint(ev.clientX, ev.clientY);
  const sq = el && el.closest('.sq');
  return sq ? Number(sq.dataset.sq) : null;
}

function setupBoardInput() {
  const board = $('board');
  let downAt = null;
  board.addEventListener('pointerdown', (ev) => {
    const sq = squareAt(ev);
    if (sq === null) return;
    downAt = sq;
    onSquare(sq, false);
  });
  board.addEventListener('pointerup', (ev) => {
    const sq = squareAt(ev);
    // A drag: released on another square than the one pressed.
    if (downAt !== null && sq !== null && sq !== downAt && mz.selected === downAt) onSquare(sq, true);
    downAt = null;
  });
}

async function newSession(game, rules) {
  stopSearch();
  mz.session = new WebSession(game, rules || '');
  mz.firstSeat = JSON.parse(mz.session.viewJson()).side_to_move;
  mz.selected = null;
  mz.engineMoves = [];
  render();
}

async function useNetwork(loader, label) {
  stopSearch();
  say(`loading ${label}…`);
  try {
    const net = await loader();
    if (net.info.game !== $('game').value) {
      say(`${net.source} is a ${net.info.game} model, but the game chosen is ${$('game').value}; choose ${net.info.game} to use it`, true);
      return false;
    }
    mz.net = net;
    await newSession(net.info.game, net.info.rules);
    $('model-info').textContent = `${net.info.summary} (${net.backend}) from ${net.source}`;
    say(`loaded ${label}`);
    engineTurn();
    return true;
  } catch (e) {
    mz.error = e.message;
    say(e.message, true);
    return false;
  }
}

function backend() {
  return params.get('backend') || 'auto';
}

function fillModels() {
  const game = $('game').value;
  const sel = $('model');
  const list = mz.models.filter((m) => m.game === game);
  sel.replaceChildren(Object.assign(document.createElement('option'), { value: '', textContent: 'none (no engine)' }),
    ...list.map((m) => Object.assign(document.createElement('option'), { value: m.path, textContent: m.name })));
  if (list.length) sel.value = list[0].path;
}

async function chooseModel() {
  const path = $('model').value;
  if (!path) {
    mz.net = null;
    $('model-info').textContent = 'no model loaded';
    await newSession($('game').value, '');
    return;
  }
  await useNetwork(() => loadNetworkFromUrl(path, backend()), path);
}

async function main() {
  await init();
  const versions = JSON.parse(rulesVersions());
  document.title += ` (rules ${Object.entries(versions).map(([g, v]) => `${g} v${v[1]}`).join(', ')})`;
  try {
    const r = await fetch('models/index.json');
    if (r.ok) mz.models = await r.json();
  } catch (_) {
    mz.models = [];
  }
  const g = params.get('game');
  if (g) $('game').value = g;
  else if (mz.models.length) $('game').value = mz.models[0].game;
  if (params.get('human')) $('human').value = params.get('human');
  if (params.get('limit')) $('limit').value = params.get('limit');
  if (params.get('limit_kind')) $('limit-kind').value = params.get('limit_kind');
  mz.levels = JSON.parse(levelsJson());
  $('level').append(...mz.levels.map((l) => Object.assign(document.createElement('option'), {
    value: String(l.number),
    textContent: `level ${l.number} (${l.visits} visits${l.temperature > 0 ? `, temperature ${l.temperature}` : ''})`,
  })));
  if (params.get('level')) $('level').value = params.get('level');
  fillModels();
  setupBoardInput();
  await newSession($('game').value, '');
  const url = params.get('model');
  if (url) {
    $('model-url').value = url;
    await useNetwork(() => loadNetworkFromUrl(url, backend()), url);
  } else if ($('model').value) {
    await chooseModel();
  }

  $('game').addEventListener('change', async () => {
    mz.net = null;
    $('model-info').textContent = 'no model loaded';
    fillModels();
    if ($('model').value) await chooseModel();
    else await newSession($('game').value, '');
  });
  $('model').addEventListener('change', chooseModel);
  $('load-url').addEventListener('click', () => {
    const u = $('model-url').value.trim();
    if (u) useNetwork(() => loadNetworkFromUrl(u, backend()), u);
  });
  $('model-files').addEventListener('change', (ev) => {
    if (ev.target.files.length) useNetwork(() => loadNetworkFromFiles(ev.target.files, backend()), 'the chosen files');
  });
  $('human').addEventListener('change', () => {
    stopSearch();
    render();
    engineTurn();
  });
  $('new-game').addEventListener('click', async () => {
    await newSession($('game').value, mz.net ? mz.net.info.rules : '');
    say('new game');
    engineTurn();
  });
  $('undo').addEventListener('click', () => {
    stopSearch();
    // Take back to the person's last turn (the engine's reply too); one move when the engine plays both sides.
    if (!mz.session.undo()) return;
    const seats = humanSeats();
    while (mz.net && seats.size > 0 && !seats.has(JSON.parse(mz.session.viewJson()).side_to_move) && mz.session.undo());
    mz.selected = null;
    render();
    say('move taken back');
  });
  $('go').addEventListener('click', () => {
    if (!mz.net) return say('load a model first', true);
    if (mz.busy) return say('the engine is thinking', true);
    engineTurn(true);
  });
  $('analyse').addEventListener('click', async () => {
    if (!mz.net) return say('load a model first', true);
    say('analysing…');
    try {
      const r = await search();
      if (r) say(`analysis: best ${r.best ?? '-'} after ${r.visits} visits`);
    } catch (e) {
      say(`engine error: ${e.message}`, true);
    }
  });
  $('flip').addEventListener('click', () => {
    mz.flipped = !mz.flipped;
    render();
  });
  $('load-position').addEventListener('click', () => {
    stopSearch();
    try {
      mz.session.setPosition($('position').value);
      mz.firstSeat = mz.firstSeat || 'south';
      mz.selected = null;
      render();
      say('position loaded');
      engineTurn();
    } catch (e) {
      say(e.message, true);
    }
  });
  $('copy-position').addEventListener('click', () => copy(mz.session.position(), 'position string'));
  $('copy-moves').addEventListener('click', () => copy(mz.session.moves().join(' '), 'move list'));
  mz.ready = true;
}

async function copy(text, what) {
  mz.clipboard = text;
  try {
    await navigator.clipboard.writeText(text);
    say(`${what} copied`);
  } catch (_) {
    say(`${what}: ${text}`);
  }
}

main().catch((e) => {
  mz.error = e.message;
  say(`the page failed to start: ${e.message}`, true);
});
