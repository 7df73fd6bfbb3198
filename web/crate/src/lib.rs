//! MartianZero in the browser: the `martian-rules` crate and the PUCT search
//! of `martian-search`, compiled to WebAssembly behind a thin wasm-bindgen
//! layer. No rule is written again in JavaScript: the page asks this module
//! for the legal moves, plays them, reads the result and the input planes,
//! and drives the search (JavaScript only runs the network, with ONNX Runtime
//! Web, on the batches of leaves the search hands it).
//!
//! The JavaScript names are camelCase (`WebSession.new`, `legalMoves`, ...);
//! errors become JavaScript exceptions whose message is the Rust message.
//!
//! The crate also builds natively (its tests, and the `web-fingerprint`
//! binary that the wasm rules are compared with).
#![warn(missing_docs)]

pub mod bundle;
pub mod fingerprint;
pub mod games;
pub mod session;

use martian_rules::GameKind;
use martian_search::MctsConfig;
use wasm_bindgen::prelude::*;

use crate::games::{web_game_names, web_games, WebGame};
use crate::session::{GameSession, Session};

/// A session for `game` (`jetan` or `martian-chess`) under the rules given
/// as JSON text (`""` or `"{}"` for the defaults; the `rules` object of a
/// bundle's `model.json` otherwise).
///
/// # Errors
/// An unknown game, rules JSON that does not parse as the game's rules, or
/// rules the rules crate does not implement.
pub fn new_session(game: &str, rules_json: &str) -> Result<Box<dyn Session>, String> {
    fn make<G: WebGame>(rules_json: &str) -> Result<Box<dyn Session>, String> {
        let text = if rules_json.trim().is_empty() { "{}" } else { rules_json };
        let rules: G::Rules =
            serde_json::from_str(text).map_err(|e| format!("bad {} rules {text}: {e}", G::KIND.name()))?;
        Ok(Box::new(GameSession::<G>::new(&rules)?))
    }
    let unknown = || Err(format!("unknown game {game:?}; the page plays {}", web_game_names(" and ")));
    match game.parse::<GameKind>() {
        Ok(kind) => with_web_game!(kind, G => make::<G>(rules_json), _ => unknown()),
        Err(_) => unknown(),
    }
}

fn js_err(e: String) -> JsError {
    JsError::new(&e)
}

/// A game on the page and its search (JavaScript class `WebSession`).
#[wasm_bindgen]
pub struct WebSession {
    inner: Box<dyn Session>,
}

/// Search settings passed from JavaScript.
fn search_config(leaves_per_batch: u32, c_puct_init: f32) -> MctsConfig {
    MctsConfig { leaves_per_batch, c_puct_init, ..MctsConfig::default() }
}

#[wasm_bindgen]
impl WebSession {
    /// A session at the initial position; see [`new_session`].
    ///
    /// # Errors
    /// As [`new_session`].
    #[wasm_bindgen(constructor)]
    pub fn new(game: &str, rules_json: &str) -> Result<WebSession, JsError> {
        new_session(game, rules_json).map(|inner| WebSession { inner }).map_err(js_err)
    }

    /// `jetan` or `martian-chess`.
    #[wasm_bindgen(getter)]
    pub fn game(&self) -> String {
        self.inner.game().to_string()
    }

    /// `[planes, rows, cols]` of one network input row.
    #[wasm_bindgen(js_name = inputShape)]
    pub fn input_shape(&self) -> Vec<u32> {
        self.inner.input_shape().iter().map(|&x| x as u32).collect()
    }

    /// Width of the policy head.
    #[wasm_bindgen(js_name = numActions)]
    pub fn num_actions(&self) -> u32 {
        self.inner.num_actions() as u32
    }

    /// The position string.
    pub fn position(&self) -> String {
        self.inner.position()
    }

    /// Loads a position string (the move list and undo restart from it).
    ///
    /// # Errors
    /// The rules crate's message for a bad string.
    #[wasm_bindgen(js_name = setPosition)]
    pub fn set_position(&mut self, text: &str) -> Result<(), JsError> {
        self.inner.set_position(text).map_err(js_err)
    }

    /// The legal moves as `<from><to>` texts.
    #[wasm_bindgen(js_name = legalMoves)]
    pub fn legal_moves(&self) -> Vec<String> {
        self.inner.legal_moves()
    }

    /// Plays a move (`<from><to>` text) after checking that it is legal.
    ///
    /// # Errors
    /// Bad move text or an illegal move; the position is unchanged.
    pub fn play(&mut self, text: &str) -> Result<(), JsError> {
        self.inner.play(text).map_err(js_err)
    }

    /// Takes back the last move; false when there is none.
    pub fn undo(&mut self) -> bool {
        self.inner.undo()
    }

    /// The moves played since the start position.
    pub fn moves(&self) -> Vec<String> {
        self.inner.moves()
    }

    /// The position as the page draws it, JSON (`session::View`).
    #[wasm_bindgen(js_name = viewJson)]
    pub fn view_json(&self) -> String {
        self.inner.view_json()
    }

    /// The result as JSON, `null` while the game goes on.
    #[wasm_bindgen(js_name = outcomeJson)]
    pub fn outcome_json(&self) -> String {
        self.inner.outcome_json()
    }

    /// The input planes of the position (`inputShape()` floats, row-major).
    pub fn encode(&self) -> Vec<f32> {
        self.inner.encode()
    }

    /// Policy index of a legal move.
    ///
    /// # Errors
    /// Bad or illegal move text.
    #[wasm_bindgen(js_name = actionIndex)]
    pub fn action_index(&self, text: &str) -> Result<u32, JsError> {
        self.inner.action_index(text).map(|x| x as u32).map_err(js_err)
    }

    /// Perft of the position to `depth` (exact below 2^53).
    pub fn perft(&self, depth: u32) -> f64 {
        self.inner.perft(depth) as f64
    }

    /// Starts a search of the position: PUCT with the project's defaults,
    /// `leaves_per_batch` leaves per network call (1..=256) and the
    /// exploration constant `c_puct_init` (> 0; 1.25 by default); `seed`
    /// seeds the tie-breaks and the random choices.
    ///
    /// # Errors
    /// Settings out of range.
    #[wasm_bindgen(js_name = searchBegin)]
    pub fn search_begin(&mut self, leaves_per_batch: u32, c_puct_init: f32, seed: u32) -> Result<(), JsError> {
        self.inner.search_begin(search_config(leaves_per_batch, c_puct_init), u64::from(seed)).map_err(js_err)
    }

    /// Selects up to `max_leaves` leaves; returns how many wait for the
    /// network (their planes: [`WebSession::search_input`]).
    ///
    /// # Errors
    /// No search begun, or the last batch not yet applied.
    #[wasm_bindgen(js_name = searchGather)]
    pub fn search_gather(&mut self, max_leaves: u32) -> Result<u32, JsError> {
        self.inner.search_gather(max_leaves as usize).map(|n| n as u32).map_err(js_err)
    }

    /// The pending leaves' planes, `[pending, planes, rows, cols]`.
    #[wasm_bindgen(js_name = searchInput)]
    pub fn search_input(&self) -> Vec<f32> {
        self.inner.search_input()
    }

    /// Applies the network's raw output rows (`[pending, numActions + 3]`).
    ///
    /// # Errors
    /// Nothing pending, or a length that does not match.
    #[wasm_bindgen(js_name = searchApply)]
    pub fn search_apply(&mut self, output: &[f32]) -> Result<(), JsError> {
        self.inner.search_apply(output).map_err(js_err)
    }

    /// Completed simulations of the current search.
    #[wasm_bindgen(js_name = searchVisits)]
    pub fn search_visits(&self) -> u32 {
        self.inner.search_visits()
    }

    /// Root statistics (visits, value, PV, top moves) as JSON, `null` without a search.
    #[wasm_bindgen(js_name = searchReportJson)]
    pub fn search_report_json(&self) -> String {
        self.inner.search_report_json()
    }

    /// The move a strength level plays from the current search (drawn at
    /// `temperature`, [`levels_json`]; the best move at 0), `undefined`
    /// without a search.
    #[wasm_bindgen(js_name = searchSample)]
    pub fn search_sample(&mut self, temperature: f32) -> Option<String> {
        self.inner.search_sample(temperature)
    }
}

/// The strength levels (`martian_search::Level`) as a JSON array of
/// `{"number", "visits", "temperature"}`, weakest first: the page offers
/// these, as `engine --level` and `play --level` do.
#[wasm_bindgen(js_name = levelsJson)]
pub fn levels_json() -> String {
    let levels: Vec<serde_json::Value> = martian_search::Level::all()
        .iter()
        .map(|l| serde_json::json!({ "number": l.number, "visits": l.visits, "temperature": l.temperature }))
        .collect();
    serde_json::Value::Array(levels).to_string()
}

/// Checks a bundle's `model.json` text against the compiled rules; returns
/// `bundle::BundleInfo` as JSON.
///
/// # Errors
/// A message naming the mismatch (format, version, game, rules, shapes).
#[wasm_bindgen(js_name = checkBundle)]
pub fn check_bundle(model_json: &str) -> Result<String, JsError> {
    let info = bundle::check_bundle(model_json).map_err(js_err)?;
    serde_json::to_string(&info).map_err(|e| JsError::new(&e.to_string()))
}

/// The record of seeded random games ([`fingerprint::fingerprint`]), for the
/// comparison with the native build.
///
/// # Errors
/// An unknown game.
#[wasm_bindgen(js_name = fingerprint)]
pub fn fingerprint_js(game: &str, seed: u32, positions: u32) -> Result<String, JsError> {
    fingerprint::fingerprint(game, u64::from(seed), positions as usize).map_err(js_err)
}

/// The rules specification versions compiled in, JSON `{game: [document, version]}`.
#[wasm_bindgen(js_name = rulesVersions)]
pub fn rules_versions() -> String {
    let versions: serde_json::Map<String, serde_json::Value> = web_games()
        .into_iter()
        .map(|k| {
            let e = k.encoding();
            (k.name().to_string(), serde_json::json!([e.rules_document, e.rules_version]))
        })
        .collect();
    serde_json::Value::Object(versions).to_string()
}

#[cfg(test)]
mod tests;
