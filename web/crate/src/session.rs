//! A game in progress on the page (position, moves played, undo) and the
//! search that thinks about it, for one game type; [`Session`] is the
//! object-safe face the wasm-bindgen layer holds for either game.
//!
//! The search is `martian_search::Mcts` driven one batch at a time: JavaScript
//! asks for the pending leaves' input planes ([`Session::search_gather`],
//! [`Session::search_input`]), runs the network once on the whole batch, and
//! hands the raw output rows back ([`Session::search_apply`]), which are
//! decoded exactly as the native engine decodes them
//! (`martian_search::DeviceBatch::decode_row`: softmax over the legal moves'
//! logits, value = P(win) - P(loss)).

use martian_rules::{GameState, Move};
use martian_search::{DeviceBatch, Evaluation, Mcts, MctsConfig};
use rand::rngs::StdRng;
use rand::SeedableRng;
use serde::Serialize;

use crate::games::{seat, Cell, StatusLine, WebGame};

/// Longest principal variation reported.
const PV_LEN: usize = 16;

/// A legal move as the page sees it.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct LegalMove {
    /// Origin square index.
    pub from: u8,
    /// Destination square index.
    pub to: u8,
    /// `<from><to>` text.
    pub text: String,
    /// A note such as "Escape", when the move is special.
    pub note: Option<&'static str>,
}

/// The result of a finished game.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct OutcomeView {
    /// `"south"`, `"north"`, or `None` for a draw.
    pub winner: Option<&'static str>,
    /// The winner's name in the game (`"Orange"`, `"South"`), `None` for a draw.
    pub winner_name: Option<&'static str>,
    /// Why the game ended, in words (`"princess captured"`).
    pub reason: String,
}

/// Everything the page draws for a position.
#[derive(Clone, Debug, Serialize)]
pub struct View {
    /// `jetan` or `martian-chess`.
    pub game: &'static str,
    /// Board width in squares.
    pub width: u8,
    /// Board height in squares.
    pub height: u8,
    /// The position string.
    pub position: String,
    /// `"south"` or `"north"`.
    pub side_to_move: &'static str,
    /// The game's names of the two seats: `[south, north]`.
    pub side_names: [&'static str; 2],
    /// Plies played (the position string's ply field).
    pub ply: u32,
    /// Occupied squares.
    pub cells: Vec<Cell>,
    /// Zone owner per square (Martian Chess), empty for Jetan.
    pub zones: Vec<(u8, &'static str)>,
    /// Legal moves (empty once the game is over).
    pub legal: Vec<LegalMove>,
    /// The result, once the game is over.
    pub outcome: Option<OutcomeView>,
    /// Per-game state lines (scores, clock, Escape rights, ...).
    pub status: Vec<StatusLine>,
    /// Moves played since the start position of this session, as text.
    pub moves: Vec<String>,
    /// The last move played, if any (for highlighting).
    pub last_move: Option<(u8, u8)>,
}

/// One root move in a search report.
#[derive(Clone, Debug, Serialize)]
pub struct MoveStat {
    /// `<from><to>` text.
    pub text: String,
    /// Visits of the move.
    pub visits: u32,
    /// The network's prior for it, in `[0, 1]`.
    pub prior: f32,
    /// Mean value for the side to move at the root, `[-1, 1]`; `None` if unvisited.
    pub q: Option<f32>,
}

/// Root statistics of the search, for the page.
#[derive(Clone, Debug, Serialize)]
pub struct SearchReport {
    /// Visits of the root's children (completed simulations).
    pub visits: u32,
    /// The search's value of the root for its side to move, `[-1, 1]`.
    pub value: f32,
    /// The move the engine would play now (most visits), if any.
    pub best: Option<String>,
    /// The principal variation, as move texts.
    pub pv: Vec<String>,
    /// Root moves by visits, most first.
    pub moves: Vec<MoveStat>,
    /// Network evaluations made (leaves sent to JavaScript).
    pub evaluations: u64,
    /// Inference calls (batches).
    pub batches: u64,
}

/// The object-safe interface of a [`GameSession`], one per game type.
///
/// Errors are messages for the page; nothing here panics on user input.
pub trait Session {
    /// The game's name (`jetan`, `martian-chess`).
    fn game(&self) -> &'static str;
    /// `[planes, rows, cols]` of one input row.
    fn input_shape(&self) -> [usize; 3];
    /// Width of the policy head.
    fn num_actions(&self) -> usize;
    /// The current position string.
    fn position(&self) -> String;
    /// Loads a position string: the session restarts from it (no moves, no undo).
    ///
    /// # Errors
    /// The rules crate's message naming what is wrong with the text.
    fn set_position(&mut self, text: &str) -> Result<(), String>;
    /// The legal moves as text.
    fn legal_moves(&self) -> Vec<String>;
    /// Plays a move given as `<from><to>` text, after checking that it is legal.
    ///
    /// # Errors
    /// Bad move text, or an illegal move (the message lists the legal ones).
    fn play(&mut self, text: &str) -> Result<(), String>;
    /// Takes back the last move; false when there is none.
    fn undo(&mut self) -> bool;
    /// The moves played, as text.
    fn moves(&self) -> Vec<String>;
    /// The position as the page draws it, as JSON ([`View`]).
    fn view_json(&self) -> String;
    /// The result as JSON ([`OutcomeView`]), `null` while the game goes on.
    fn outcome_json(&self) -> String;
    /// Input planes of the current position, `input_shape()` floats.
    fn encode(&self) -> Vec<f32>;
    /// Policy index of a legal move given as text.
    ///
    /// # Errors
    /// Bad or illegal move text.
    fn action_index(&self, text: &str) -> Result<usize, String>;
    /// Perft of the current position (`martian_rules::perft`).
    fn perft(&self, depth: u32) -> u64;
    /// Starts a search of the current position; discards any earlier one.
    ///
    /// # Errors
    /// Search settings out of range (`MctsConfig::validate`).
    fn search_begin(&mut self, cfg: MctsConfig, seed: u64) -> Result<(), String>;
    /// Selects up to `max_leaves` leaves for evaluation; returns how many are
    /// now pending (0 when the selections ended in known values only, or the
    /// root's game is over).
    ///
    /// # Errors
    /// No search was begun, or leaves from the last gather wait for their evaluation.
    fn search_gather(&mut self, max_leaves: usize) -> Result<usize, String>;
    /// Input planes of the pending leaves, `[pending, planes, rows, cols]` row-major.
    fn search_input(&self) -> Vec<f32>;
    /// Applies the network's raw output for the pending leaves:
    /// `[pending, num_actions + 3]` row-major (policy logits, then the
    /// win/draw/loss logits), as `model.onnx` returns it.
    ///
    /// # Errors
    /// No leaves pending, or a length that does not match them.
    fn search_apply(&mut self, output: &[f32]) -> Result<(), String>;
    /// Completed simulations of the current search (0 without one).
    fn search_visits(&self) -> u32;
    /// The root statistics of the current search as JSON ([`SearchReport`]),
    /// `null` without a search.
    fn search_report_json(&self) -> String;
    /// The move a strength level plays from the current search: drawn at
    /// move-choice temperature `temperature` from the search's visits
    /// (`martian_search::SearchResult::sample_move`) with the search's
    /// generator; the best move at 0. `None` without a search or a move.
    fn search_sample(&mut self, temperature: f32) -> Option<String>;
}

/// The state of one search.
struct SearchState<G: GameState> {
    tree: Mcts<G>,
    rng: StdRng,
    batch: DeviceBatch,
    evals: Vec<Evaluation>,
    evaluations: u64,
    batches: u64,
}

/// A game in progress for game type `G`: the current state, the states
/// before each move (for undo) and the search, if any.
pub struct GameSession<G: WebGame> {
    state: G,
    history: Vec<G>,
    moves: Vec<String>,
    last_moves: Vec<Move>,
    search: Option<SearchState<G>>,
}

impl<G: WebGame> GameSession<G> {
    /// The initial position under `rules`.
    ///
    /// # Errors
    /// A rules switch that the rules crate does not implement.
    pub fn new(rules: &G::Rules) -> Result<Self, String> {
        let state = G::new_game(rules).map_err(|e| e.to_string())?;
        Ok(GameSession { state, history: Vec::new(), moves: Vec::new(), last_moves: Vec::new(), search: None })
    }

    /// The current state.
    pub fn state(&self) -> &G {
        &self.state
    }

    fn legal(&self) -> Vec<Move> {
        let mut v = Vec::with_capacity(G::MAX_MOVES);
        self.state.legal_moves(&mut v);
        v
    }

    fn outcome_view(&self) -> Option<OutcomeView> {
        self.state.outcome().map(|o| OutcomeView {
            winner: o.winner.map(seat),
            winner_name: o.winner.map(G::side_name),
            reason: o.reason.to_string(),
        })
    }
}

impl<G: WebGame> Session for GameSession<G> {
    fn game(&self) -> &'static str {
        G::KIND.name()
    }

    fn input_shape(&self) -> [usize; 3] {
        G::INPUT_SHAPE
    }

    fn num_actions(&self) -> usize {
        G::NUM_ACTIONS
    }

    fn position(&self) -> String {
        self.state.to_position()
    }

    fn set_position(&mut self, text: &str) -> Result<(), String> {
        let s = G::from_position(text.trim(), self.state.rules()).map_err(|e| e.to_string())?;
        self.state = s;
        self.history.clear();
        self.moves.clear();
        self.last_moves.clear();
        self.search = None;
        Ok(())
    }

    fn legal_moves(&self) -> Vec<String> {
        self.legal().into_iter().map(|m| self.state.move_to_string(m)).collect()
    }

    fn play(&mut self, text: &str) -> Result<(), String> {
        let mv = self.state.parse_move(text.trim()).map_err(|e| e.to_string())?;
        let before = self.state.clone();
        self.state.play(mv).map_err(|e| e.to_string())?;
        self.history.push(before);
        self.moves.push(text.trim().to_string());
        self.last_moves.push(mv);
        self.search = None;
        Ok(())
    }

    fn undo(&mut self) -> bool {
        match self.history.pop() {
            Some(s) => {
                self.state = s;
                self.moves.pop();
                self.last_moves.pop();
                self.search = None;
                true
            }
            None => false,
        }
    }

    fn moves(&self) -> Vec<String> {
        self.moves.clone()
    }

    fn view_json(&self) -> String {
        let (width, height) = G::SIZE;
        let legal = self
            .legal()
            .into_iter()
            .map(|m| LegalMove {
                from: m.from,
                to: m.to,
                text: self.state.move_to_string(m),
                note: self.state.move_note(m),
            })
            .collect();
        let view = View {
            game: G::KIND.name(),
            width,
            height,
            position: self.state.to_position(),
            side_to_move: seat(self.state.side_to_move()),
            side_names: [G::side_name(martian_rules::Side::South), G::side_name(martian_rules::Side::North)],
            ply: self.state.ply(),
            cells: self.state.cells(),
            zones: self.state.zones(),
            legal,
            outcome: self.outcome_view(),
            status: self.state.status(),
            moves: self.moves.clone(),
            last_move: self.last_moves.last().map(|m| (m.from, m.to)),
        };
        serde_json::to_string(&view).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
    }

    fn outcome_json(&self) -> String {
        serde_json::to_string(&self.outcome_view()).unwrap_or_else(|_| "null".into())
    }

    fn encode(&self) -> Vec<f32> {
        let mut out = vec![0.0; G::INPUT_SHAPE.iter().product()];
        self.state.encode(&mut out);
        out
    }

    fn action_index(&self, text: &str) -> Result<usize, String> {
        let mv = self.state.parse_move(text.trim()).map_err(|e| e.to_string())?;
        Ok(self.state.action_index(mv))
    }

    fn perft(&self, depth: u32) -> u64 {
        martian_rules::perft(&self.state, depth)
    }

    fn search_begin(&mut self, cfg: MctsConfig, seed: u64) -> Result<(), String> {
        cfg.validate()?;
        let mut rng = StdRng::seed_from_u64(seed);
        let mut tree = Mcts::new(cfg, self.state.clone());
        tree.begin_search(false, 0, &mut rng);
        self.search = Some(SearchState {
            tree,
            rng,
            batch: DeviceBatch::default(),
            evals: Vec::new(),
            evaluations: 0,
            batches: 0,
        });
        Ok(())
    }

    fn search_gather(&mut self, max_leaves: usize) -> Result<usize, String> {
        let s = self.search.as_mut().ok_or("no search was begun")?;
        if s.tree.num_pending() > 0 {
            return Err(format!("{} leaves still wait for their evaluation", s.tree.num_pending()));
        }
        if s.tree.root_is_terminal() {
            return Ok(0);
        }
        s.tree.gather(max_leaves.max(1), &mut s.rng);
        s.batch.clear::<G>();
        for (pos, moves) in s.tree.pending_leaves() {
            s.batch.push_row(pos, moves);
        }
        Ok(s.tree.num_pending())
    }

    fn search_input(&self) -> Vec<f32> {
        match &self.search {
            Some(s) => {
                let mut out = vec![0.0; s.batch.rows * s.batch.row_len()];
                s.batch.unpack_rows(0, s.batch.rows, &mut out);
                out
            }
            None => Vec::new(),
        }
    }

    fn search_apply(&mut self, output: &[f32]) -> Result<(), String> {
        let s = self.search.as_mut().ok_or("no search was begun")?;
        let rows = s.tree.num_pending();
        if rows == 0 {
            return Err("no leaves are waiting for an evaluation".into());
        }
        let width = G::NUM_ACTIONS + 3;
        if output.len() != rows * width {
            return Err(format!(
                "the network returned {} numbers for {rows} positions; expected {rows} x {width} (policy {} + win/draw/loss 3)",
                output.len(),
                G::NUM_ACTIONS
            ));
        }
        let b = &mut s.batch;
        b.logits.clear();
        b.wdl.clear();
        // The model's raw logits: the softmax is taken here, in decode_row.
        b.softmax_on_device = false;
        for r in 0..rows {
            let row = &output[r * width..(r + 1) * width];
            for &a in &b.actions[b.offsets[r]..b.offsets[r + 1]] {
                b.logits.push(row[a as usize]);
            }
            b.wdl.extend(softmax3([row[G::NUM_ACTIONS], row[G::NUM_ACTIONS + 1], row[G::NUM_ACTIONS + 2]]));
        }
        b.check_outputs().map_err(|e| e.to_string())?;
        s.evals.resize_with(rows, Evaluation::default);
        for r in 0..rows {
            b.decode_row(r, &mut s.evals[r]);
        }
        s.tree.apply_evaluations(&s.evals, &mut s.rng);
        s.evaluations += rows as u64;
        s.batches += 1;
        Ok(())
    }

    fn search_visits(&self) -> u32 {
        self.search.as_ref().map_or(0, |s| s.tree.child_visits())
    }

    fn search_sample(&mut self, temperature: f32) -> Option<String> {
        let s = self.search.as_mut()?;
        let m = s.tree.result().sample_move(temperature, &mut s.rng)?;
        Some(s.tree.root_state().move_to_string(m))
    }

    fn search_report_json(&self) -> String {
        let Some(s) = &self.search else { return "null".into() };
        let root = s.tree.root_state();
        let result = s.tree.result();
        let mut moves: Vec<MoveStat> = result
            .visits
            .iter()
            .enumerate()
            .map(|(i, &(m, visits))| MoveStat {
                text: root.move_to_string(m),
                visits,
                prior: result.priors[i],
                q: result.q[i],
            })
            .collect();
        moves.sort_by(|a, b| b.visits.cmp(&a.visits).then(b.prior.total_cmp(&a.prior)));
        let mut pv = Vec::new();
        let mut walk = root.clone();
        for m in s.tree.principal_variation(PV_LEN) {
            pv.push(walk.move_to_string(m));
            walk.play_unchecked(m);
        }
        let report = SearchReport {
            visits: s.tree.child_visits(),
            value: result.root_value,
            best: result.best_move().map(|m| root.move_to_string(m)),
            pv,
            moves,
            evaluations: s.evaluations,
            batches: s.batches,
        };
        serde_json::to_string(&report).unwrap_or_else(|_| "null".into())
    }
}

/// Softmax of three logits (the win/draw/loss head), stable for large inputs.
pub fn softmax3(x: [f32; 3]) -> [f32; 3] {
    let m = x[0].max(x[1]).max(x[2]);
    let e = x.map(|v| (v - m).exp());
    let sum = e[0] + e[1] + e[2];
    if sum > 0.0 && sum.is_finite() {
        e.map(|v| v / sum)
    } else {
        [1.0 / 3.0; 3]
    }
}
