//! The game interface shared by Jetan and Martian Chess.
//!
//! Perspective rule used across the project: values are always in `[-1, 1]` for
//! a named side; [`Outcome::value_for`] is the only place where a result
//! becomes a number.

use std::fmt;
use std::hash::Hash;

use serde::{de::DeserializeOwned, Deserialize, Serialize};

use crate::error::RulesError;

/// One of the two players. Both games seat one player on the south edge
/// (ranks 1..) and one on the north edge.
///
/// * Jetan: `South` = Black, `North` = Orange (jetan spec §1).
/// * Martian Chess: `South` and `North` own the south and north zones (spec §1).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Side {
    /// The player seated on rank 1's edge.
    South = 0,
    /// The player seated on the last rank's edge.
    North = 1,
}

impl Side {
    /// Both sides, `South` first.
    pub const ALL: [Side; 2] = [Side::South, Side::North];

    /// The other side.
    #[inline]
    pub const fn opponent(self) -> Side {
        match self {
            Side::South => Side::North,
            Side::North => Side::South,
        }
    }

    /// 0 for South, 1 for North.
    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }
}

/// A move of either game: the pair (origin square, destination square).
///
/// In both games the pair identifies the move uniquely (jetan spec §3 and
/// §10.1: captures and Escapes are implied by the position; martian-chess spec
/// §10: captures and merges are implied by the board). Squares are indices
/// `file + width * (rank - 1)`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Move {
    /// Origin square index.
    pub from: u8,
    /// Destination square index.
    pub to: u8,
}

impl Move {
    /// A move from `from` to `to` (square indices).
    #[inline]
    pub const fn new(from: u8, to: u8) -> Move {
        Move { from, to }
    }
}

/// Why a game ended.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum EndReason {
    /// Jetan §8.1: a piece landed on the enemy Princess.
    PrincessCaptured,
    /// Jetan §8.2: a Chief captured the enemy Chief.
    ChiefCapturedByChief,
    /// Jetan §8.2: a piece other than the Chief captured the enemy Chief
    /// (a draw by the standard rules, a win under `CapturerWins`).
    ChiefCapturedByNonChief,
    /// Jetan §8.3: the same position for the third time.
    Repetition,
    /// Jetan §8.4: the small-material countdown ran out.
    SmallMaterial,
    /// Both games: the `max_plies` cap was reached.
    MoveCap,
    /// Jetan §8.5: `no_capture_limit` plies without a capture.
    NoCaptureLimit,
    /// The side to move had no legal move (Jetan §8.6, Martian Chess §9.4).
    NoLegalMoves,
    /// Martian Chess §9.1: a zone became empty.
    EmptyZone,
    /// Martian Chess §9.2: the deadlock clock ran out.
    Clock,
}

impl fmt::Display for EndReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            EndReason::PrincessCaptured => "princess captured",
            EndReason::ChiefCapturedByChief => "chief captured by chief",
            EndReason::ChiefCapturedByNonChief => "chief captured by a non-chief",
            EndReason::Repetition => "threefold repetition",
            EndReason::SmallMaterial => "small-material countdown",
            EndReason::MoveCap => "move cap",
            EndReason::NoCaptureLimit => "no-capture limit",
            EndReason::NoLegalMoves => "no legal moves",
            EndReason::EmptyZone => "empty zone",
            EndReason::Clock => "deadlock clock",
        };
        f.write_str(s)
    }
}

/// The most value players any game has ([`GameState::num_players`]).
pub const MAX_PLAYERS: usize = 4;

/// The result of a finished game.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Outcome {
    /// The winner, or `None` for a draw.
    pub winner: Option<Side>,
    /// What ended the game.
    pub reason: EndReason,
}

impl Outcome {
    /// The result as a value for `side`: +1 win, 0 draw, -1 loss.
    #[inline]
    pub fn value_for(&self, side: Side) -> f32 {
        match self.winner {
            None => 0.0,
            Some(w) if w == side => 1.0,
            Some(_) => -1.0,
        }
    }
}

/// The SplitMix64 output function (Steele, Lea and Flood, "Fast splittable
/// pseudorandom number generators", OOPSLA 2014): a bijection on `u64` whose
/// outputs for nearby inputs look independent. Used to mix counters into keys
/// ([`GameState::input_key`]) and for seeded tie-breaks in search.
#[inline]
pub const fn mix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// `hash` mixed with two words of extra state: equal results for distinct
/// `(hash, a, b)` only by a 64-bit collision. Each word must encode its
/// fields injectively (the caller packs them).
#[inline]
pub(crate) fn mix_key(hash: u64, a: u64, b: u64) -> u64 {
    hash ^ mix64(mix64(a) ^ b.rotate_left(17) ^ 0x5EED_4B45_5953_0001)
}

/// Which game: the names of the games this crate implements.
///
/// This enum, [`GameKind::name`] and the [`with_game!`](crate::with_game) macro
/// (in the `registry` module, with the dynamic methods such as
/// [`GameKind::num_actions`]) are the only places that list the games;
/// everything else that needs a game's knowledge asks its [`GameState`]
/// implementation, either generically or through those dynamic methods.
/// Adding a game means a variant here, its name, and one arm of `with_game!`.
/// The enum lives here, apart from the registry, so that the games can name
/// their kind ([`GameState::KIND`]) without importing one another.
///
/// Making a game from its name (a command line's `--game`, a config's
/// `game`): parse the name, then let [`with_game!`](crate::with_game) bind
/// the game's type.
///
/// ```
/// use martian_rules::{with_game, GameKind, GameState};
///
/// let kind: GameKind = "martian-chess".parse()?;
/// assert_eq!(kind, GameKind::MartianChess);
/// assert_eq!(kind.name(), "martian-chess");
/// let start = with_game!(kind, G => G::new_game(&Default::default())?.to_position());
/// assert_eq!(start, "QQD1/QDP1/DPP1/4/4/1PPD/1PDQ/1DQQ S 0 0 - - 0 0");
/// // Unknown names are errors that list the known ones.
/// let err = "chess".parse::<GameKind>().unwrap_err();
/// assert!(err.to_string().contains("jetan, martian-chess, martian-chess-4p"));
/// # Ok::<(), martian_rules::RulesError>(())
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GameKind {
    /// Jetan (10x10).
    Jetan,
    /// Looney's Martian Chess, two players (4x8).
    MartianChess,
    /// Looney's Martian Chess, four players (8x8; teams or free-for-all, spec §14).
    #[serde(rename = "martian-chess-4p")]
    MartianChess4p,
}

impl GameKind {
    /// Every game, in the order the command line lists them.
    pub const ALL: [GameKind; 3] = [GameKind::Jetan, GameKind::MartianChess, GameKind::MartianChess4p];

    /// The name used on the command line and in files: `jetan`, `martian-chess` or `martian-chess-4p`.
    pub fn name(self) -> &'static str {
        match self {
            GameKind::Jetan => "jetan",
            GameKind::MartianChess => "martian-chess",
            GameKind::MartianChess4p => "martian-chess-4p",
        }
    }

    /// The names of [`GameKind::ALL`], for help texts and errors.
    pub fn names() -> Vec<&'static str> {
        GameKind::ALL.iter().map(|g| g.name()).collect()
    }
}

impl fmt::Display for GameKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for GameKind {
    type Err = RulesError;

    /// Parses a [`GameKind::name`].
    ///
    /// # Errors
    /// [`RulesError::UnknownGame`] with the known names.
    fn from_str(s: &str) -> Result<GameKind, RulesError> {
        GameKind::ALL
            .into_iter()
            .find(|g| g.name() == s)
            .ok_or_else(|| RulesError::UnknownGame { name: s.to_string(), known: GameKind::names().join(", ") })
    }
}

/// What an exported network bundle records about a game's encoding
/// (`model.json`, written by `martian_model::export`), so that a frontend can
/// encode positions and read the policy without this crate. Each game's
/// [`GameState::ENCODING`] fills it from its spec's encoding section.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct EncodingDescription {
    /// The rules specification, as a path in the repository (`docs/rules/...`).
    pub rules_document: &'static str,
    /// Version of that specification this implementation follows.
    pub rules_version: &'static str,
    /// The canonical orientation (how the board is turned for the side to move).
    pub orientation: &'static str,
    /// The input planes as `(name, meaning)` pairs, in plane order.
    pub planes: &'static [(&'static str, &'static str)],
    /// The policy index formula, in words.
    pub action_encoding: &'static str,
    /// Square numbering and move text.
    pub squares: &'static str,
}

/// Mirrors the placement field of a position string left-right: every rank
/// (separated by `/`) is read as tokens (one piece letter, or a run of digits
/// giving empty squares) and written in reverse order. Used by the games'
/// [`GameState::mirrored`].
pub(crate) fn mirror_placement(placement: &str) -> String {
    let mut out = String::with_capacity(placement.len());
    for (i, rank) in placement.split('/').enumerate() {
        if i > 0 {
            out.push('/');
        }
        let mut tokens: Vec<&str> = Vec::new();
        let mut start = 0;
        let b = rank.as_bytes();
        while start < b.len() {
            let mut end = start + 1;
            if b[start].is_ascii_digit() {
                while end < b.len() && b[end].is_ascii_digit() {
                    end += 1;
                }
            }
            tokens.push(&rank[start..end]);
            start = end;
        }
        for t in tokens.iter().rev() {
            out.push_str(t);
        }
    }
    out
}

/// The error for `mv`, not among `legal` (the position's legal moves): lists
/// them, or says that the game is over when there are none.
fn illegal_move<G: GameState>(g: &G, mv: Move, legal: &[Move]) -> RulesError {
    let list = if legal.is_empty() && g.outcome().is_some() {
        "none, the game is over".to_string()
    } else {
        legal.iter().map(|&m| g.move_to_string(m)).collect::<Vec<_>>().join(" ")
    };
    RulesError::IllegalMove { mv: g.move_to_string(mv), legal: list }
}

/// Whether `mv` is one of `g`'s legal moves (allocates a move list).
pub(crate) fn is_legal<G: GameState>(g: &G, mv: Move) -> bool {
    let mut legal = Vec::with_capacity(G::MAX_MOVES);
    g.legal_moves(&mut legal);
    legal.contains(&mv)
}

/// `mv` if it is legal in `g`, else the error of [`illegal_move`]: the
/// legality check of every game's [`GameState::parse_move`].
pub(crate) fn legal_move_or_error<G: GameState>(g: &G, mv: Move) -> Result<Move, RulesError> {
    let mut legal = Vec::with_capacity(G::MAX_MOVES);
    g.legal_moves(&mut legal);
    if legal.contains(&mv) {
        Ok(mv)
    } else {
        Err(illegal_move(g, mv, &legal))
    }
}

/// Whether `g`'s side to move has a move that wins at once, by brute force:
/// every legal move is played on a copy of `g` and the result checked. The
/// reference for [`GameState::has_winning_move`] (its default) and for the
/// tests of the games' fast versions. Allocates a move list and a copy.
pub fn has_winning_move_by_play<G: GameState>(g: &G) -> bool {
    if g.outcome().is_some() {
        return false;
    }
    let me = g.side_to_move();
    let mut moves = Vec::with_capacity(G::MAX_MOVES);
    g.legal_moves(&mut moves);
    let mut s = g.clone();
    moves.iter().any(|&m| {
        s.clone_from(g);
        s.play_unchecked(m);
        s.outcome().is_some_and(|o| o.winner == Some(me))
    })
}

/// A game state: the position plus whatever history the rules need
/// (e.g. Jetan's repetition history).
///
/// `Clone` may allocate (history); hot loops reuse a state with
/// [`Clone::clone_from`], which does not allocate once capacities are reached.
///
/// All methods taking `&self` are safe to call from several threads at once.
pub trait GameState: Clone + fmt::Debug + Send + Sync + 'static {
    /// The rules configuration (the switches of the spec), serde-readable from TOML.
    type Rules: Clone + fmt::Debug + Default + PartialEq + Serialize + DeserializeOwned + Send + Sync;

    /// Which game this is.
    const KIND: GameKind;
    /// Width of the policy head: number of distinct action indices.
    const NUM_ACTIONS: usize;
    /// Network input shape `[planes, rows, cols]` written by [`GameState::encode`].
    const INPUT_SHAPE: [usize; 3];
    /// An upper bound on the number of legal moves in any position.
    const MAX_MOVES: usize;
    /// Whether the game counts points that decide the result (Martian Chess,
    /// spec §6 and §9), so that [`GameState::final_score_difference`] has a
    /// value once the game is over. False for Jetan (captures win, no points).
    const HAS_SCORE: bool = false;
    /// What an exported network bundle says about this game's encoding.
    const ENCODING: EncodingDescription;

    /// The initial position under `rules`.
    ///
    /// # Errors
    /// [`RulesError::Unsupported`] if a rules switch is set to a value that is
    /// not implemented.
    fn new_game(rules: &Self::Rules) -> Result<Self, RulesError>;

    /// Parses a position string (jetan §10.3, martian-chess §10).
    ///
    /// ```
    /// use martian_rules::martian::{MartianChess, MartianRules, Piece};
    /// use martian_rules::{GameState, RulesError, Side};
    ///
    /// // Placement (rank 8 first), side to move, scores, last move, clock, quiet plies, ply.
    /// let text = "QQD1/QDP1/DPP1/4/P3/2PD/1PDQ/1DQQ N 0 0 b3a4 - 1 1"; // after South's b3a4
    /// let rules = MartianRules::default();
    /// let game = MartianChess::from_position(text, &rules)?;
    /// assert_eq!(game.side_to_move(), Side::North);
    /// assert_eq!(game.piece_at(0), None); // a1 is empty
    /// assert_eq!(game.piece_at(28), Some(Piece::Queen)); // a8
    /// assert_eq!(game.to_position(), text);
    /// // A bad string is an error that names the problem.
    /// let err = MartianChess::from_position("QQD1/QDP1 S 0 0 - - 0 0", &rules).unwrap_err();
    /// assert!(matches!(err, RulesError::Position { .. }));
    /// # Ok::<(), RulesError>(())
    /// ```
    ///
    /// # Errors
    /// [`RulesError::Position`] naming the problem and the offending text.
    fn from_position(text: &str, rules: &Self::Rules) -> Result<Self, RulesError>;

    /// The position string; `from_position(to_position())` gives the same
    /// position, hash, legal moves and outcome (winner and reason).
    ///
    /// Finished games round-trip too: the Jetan countdown field `0` and the
    /// Martian Chess clock field `0` mark the countdown endings, and the
    /// others follow from the board and counters. The exceptions are Jetan
    /// games that end by taking a Princess or a Chief (the board lacks it, so
    /// the string is rejected) and the repetition draw (it needs the game's
    /// history; the string loads with its other state).
    fn to_position(&self) -> String;

    /// The rules this state is played under.
    fn rules(&self) -> &Self::Rules;

    /// Side to move.
    fn side_to_move(&self) -> Side;

    /// Number of **value players**: players that each get their own result
    /// value ([`GameState::player_values`]). 2 for two-sided games (Jetan,
    /// Martian Chess, and the four-player team game, whose value is per team,
    /// martian-chess §14.7); 4 for four-player free-for-all (§14.7,
    /// `teams = false`). Searches and networks with more than 2 value players
    /// back up a value vector (max^n, `docs/architecture.md`). At most
    /// [`MAX_PLAYERS`]; constant over a game.
    fn num_players(&self) -> usize {
        2
    }

    /// Index in `0..num_players()` of the value player to move: by default
    /// [`GameState::side_to_move`]'s [`Side::index`]; in four-player
    /// free-for-all the seat index (SW 0, NW 1, NE 2, SE 3, §14.1).
    fn player_to_move(&self) -> usize {
        self.side_to_move().index()
    }

    /// The result value of every value player once the game is over, indexed
    /// by player (`[0..num_players()]` meaningful, the rest 0), else `None`.
    /// Values are in `[-1, 1]` and add up to 0. By default
    /// [`Outcome::value_for`] of `South` and `North`; four-player
    /// free-for-all gives the zero-sum values of martian-chess §14.7
    /// (`(4p - 1) / 3` for a share `p` of the win).
    fn player_values(&self) -> Option<[f32; MAX_PLAYERS]> {
        let o = self.outcome()?;
        let mut v = [0.0; MAX_PLAYERS];
        v[0] = o.value_for(Side::South);
        v[1] = o.value_for(Side::North);
        Some(v)
    }

    /// Plies played since the start (the ply field of the position string).
    fn ply(&self) -> u32;

    /// Clears `out` and writes every legal move into it. Empty when the game is over.
    /// Allocates nothing once `out` has capacity [`GameState::MAX_MOVES`].
    ///
    /// ```
    /// use martian_rules::jetan::Jetan;
    /// use martian_rules::GameState;
    ///
    /// let mut game = Jetan::new_game(&Default::default())?;
    /// let mut moves = Vec::with_capacity(Jetan::MAX_MOVES);
    /// game.legal_moves(&mut moves);
    /// assert_eq!(moves.len(), game.count_legal_moves());
    /// let first = moves[0];
    /// game.play(first)?; // checked: an illegal move leaves the game as it was
    /// assert_eq!(game.ply(), 1);
    /// assert!(game.play(first).is_err()); // that piece has moved on
    /// assert_eq!(game.ply(), 1);
    /// # Ok::<(), martian_rules::RulesError>(())
    /// ```
    fn legal_moves(&self, out: &mut Vec<Move>);

    /// Number of legal moves (0 when the game is over). Used for bulk counting in perft.
    fn count_legal_moves(&self) -> usize {
        let mut v = Vec::with_capacity(Self::MAX_MOVES);
        self.legal_moves(&mut v);
        v.len()
    }

    /// Plays a legal move in place.
    ///
    /// # Panics
    /// Behaviour with an illegal move is unspecified (may panic in debug builds);
    /// use [`GameState::play`] for untrusted moves.
    fn play_unchecked(&mut self, mv: Move);

    /// Plays `mv` after checking that it is legal.
    ///
    /// # Errors
    /// [`RulesError::IllegalMove`] with the list of legal moves; `self` is unchanged.
    fn play(&mut self, mv: Move) -> Result<(), RulesError> {
        legal_move_or_error(self, mv)?;
        self.play_unchecked(mv);
        Ok(())
    }

    /// The result if the game is over, else `None`.
    ///
    /// ```
    /// use martian_rules::martian::MartianChess;
    /// use martian_rules::{EndReason, GameState, Side};
    ///
    /// // South's zone (ranks 1-4) is empty: the game is over, scored 5 to 3.
    /// let game = MartianChess::from_position("Q3/4/4/4/4/4/4/4 S 5 3 - - 0 20", &Default::default())?;
    /// let outcome = game.outcome().expect("finished");
    /// assert_eq!(outcome.reason, EndReason::EmptyZone);
    /// assert_eq!(outcome.winner, Some(Side::South));
    /// assert_eq!(outcome.value_for(Side::North), -1.0);
    /// assert_eq!(game.final_score_difference(Side::South), Some(2));
    /// assert_eq!(game.count_legal_moves(), 0);
    /// # Ok::<(), martian_rules::RulesError>(())
    /// ```
    fn outcome(&self) -> Option<Outcome>;

    /// Whether the side to move has a legal move that ends the game at once
    /// with its own win (an immediate win: Jetan's Princess taken, Martian
    /// Chess's zone emptied with the better score, ...). `false` once the game
    /// is over. Equal to [`has_winning_move_by_play`] in every position.
    ///
    /// The search's leaf threat check (`martian_search::MctsConfig::leaf_threat_check`)
    /// asks this of every child of a newly expanded node, so each game
    /// overrides it with a test that only looks at the moves that can end the
    /// game, without playing the others and without allocating. The default
    /// plays every legal move on a copy ([`has_winning_move_by_play`]), which
    /// allocates.
    fn has_winning_move(&self) -> bool {
        has_winning_move_by_play(self)
    }

    /// Whether the side that just moved (not the side to move) would have a
    /// move that wins at once if it were its turn again: a threat, in the
    /// sense of the decisive-move checks of Teytaud & Teytaud ("On the
    /// huge benefit of decisive moves in Monte-Carlo tree search
    /// algorithms", CIG 2010). The search's shallow proofs
    /// (`martian_search::mcts` "Trap proofs") use it to skip the moves that
    /// cannot start a forced win in three plies: such a win needs a threat
    /// after its first move. It may answer `true` where there is no threat
    /// (the proofs stay exact, only slower) and must never answer `false`
    /// where there is one. `false` once the game is over. The default is
    /// `true` (no pruning); each game overrides it with a test that
    /// allocates nothing.
    fn threatens_win(&self) -> bool {
        self.outcome().is_none()
    }

    /// A move among `moves` (legal moves of the side to move) after which
    /// the opponent has no move that wins at once and the game is not over
    /// with the opponent's win: a reply that parries every threat. `None`
    /// says only that the game found none cheaply (there may be one). The
    /// trap proofs ask it for a refutation of a candidate first move before
    /// playing the replies one by one, so each game answers from its board,
    /// trying the likeliest parries first. The default finds none.
    fn safe_reply(&self, moves: &[Move]) -> Option<Move> {
        let _ = moves;
        None
    }

    /// A legal move after which the opponent has no move that wins at once
    /// (as [`GameState::safe_reply`]), found from the board without the
    /// list of legal moves: the trap proofs ask it first, and generate the
    /// replies only when it finds none. `None` says only that none was found
    /// this way. The default finds none.
    fn safe_reply_from_board(&self) -> Option<Move> {
        None
    }

    /// The moves among `moves` (legal moves of the side to move) that may
    /// start a forced win of three or more plies, written to `out` (cleared
    /// first): every move after which the position is unfinished and the
    /// side that moved threatens a win ([`GameState::threatens_win`]), and
    /// with `zugzwangs` also every move after which the opponent might have
    /// no reply that avoids handing it a win at once (every reply ends the
    /// game in its favour or leaves it a winning move). A game may keep more
    /// moves than these (the caller plays each kept one and checks), never
    /// fewer. The trap proofs (`martian_search::mcts`) ask this once per
    /// position instead of playing every move, so each game answers from its
    /// own board. The default keeps every move.
    fn forcing_moves(&self, moves: &[Move], zugzwangs: bool, out: &mut Vec<Move>) {
        let _ = zugzwangs;
        out.clear();
        out.extend_from_slice(moves);
    }

    /// For each of `moves` (legal moves of the side to move), whether the
    /// opponent has a move that wins at once after it
    /// ([`GameState::has_winning_move`] of the position it leaves), written
    /// to `out` (cleared first, one entry per move); the entry of a move that
    /// ends the game is unspecified (callers check [`GameState::outcome`]
    /// first). Returns `false`, leaving `out` to be ignored, when the game
    /// has no answer cheaper than playing each move: the search then plays
    /// them. MCTS asks it once per expanded position for its threat check
    /// of every child (the second ply of exact lookahead), so a game that
    /// answers from its board saves a position's worth of moves played and
    /// tested. The default answers `false`.
    fn winning_replies(&self, moves: &[Move], out: &mut Vec<bool>) -> bool {
        let _ = (moves, out);
        false
    }

    /// Whether a random opening (matches' opening books, self-play's random
    /// first plies) may play `mv`, a legal move here: moves that spend a
    /// once-a-game right are left out, so that openings do not decide what
    /// the players would have kept (Jetan: the Princess's Escape, spec §6).
    /// The default admits every move.
    fn is_opening_move(&self, mv: Move) -> bool {
        let _ = mv;
        true
    }

    /// The final point difference of a finished game from `side`'s view:
    /// `side`'s points minus the opponent's, in the game's own units (Martian
    /// Chess: pips captured, spec §6; the difference decides the result, §9).
    /// `None` while the game is not over, and always for a game without
    /// points ([`GameState::HAS_SCORE`] false). The auxiliary score head of
    /// the network learns this number (`docs/training.md`).
    fn final_score_difference(&self, side: Side) -> Option<i32> {
        let _ = side;
        None
    }

    /// For a finished game that the rules drew: the side an adjudication
    /// would favour, for training targets only (`selfplay.draw_value`,
    /// `docs/training.md`); `None` while the game is not over, for a decisive
    /// game, when the adjudication finds the sides equal, and for games
    /// without one (the default). Jetan: seed 000's order (spec §8.4,
    /// `Seed000Adjudication`: more pieces, then the higher piece values).
    fn draw_adjudication(&self) -> Option<Side> {
        None
    }

    /// The side ahead on material in this position, finished or not, by the
    /// order of [`GameState::draw_adjudication`]; `None` when the sides are
    /// level and for games without such an order (the default). The search's
    /// material contempt reads it (`search.contempt_mode = "material"`: the
    /// side ahead is the one that avoids a draw). Jetan: seed 000's order
    /// without Chiefs and Princesses (spec §8.4).
    fn material_leader(&self) -> Option<Side> {
        None
    }

    /// Zobrist hash of the position (placement, side to move and the state that
    /// decides legal moves), kept incrementally by [`GameState::play_unchecked`].
    fn hash(&self) -> u64;

    /// The same hash recomputed from scratch (for tests).
    fn recompute_hash(&self) -> u64;

    /// A key for everything [`GameState::encode`] reads: two states with equal
    /// keys have identical input planes (up to a 64-bit hash collision, about
    /// 2^-64 per pair of distinct inputs).
    ///
    /// [`GameState::hash`] decides legal moves only; the planes also show
    /// counters and history (ply, quiet plies, countdowns, how often the
    /// position occurred before) and depend on rules fields (`max_plies`, the
    /// orientation). This key mixes the hash with all of them, so an evaluation
    /// cache keyed by it (`martian_search::CachedEvaluator`) returns exactly what
    /// the network would compute. Equal input planes may still get different
    /// keys (the key may be finer than the planes, never coarser).
    ///
    /// Computed on demand (not incrementally); Jetan's repetition count makes
    /// it linear in the repetition history since the last irreversible ply.
    fn input_key(&self) -> u64;

    /// `<from><to>` text of a move, e.g. `e9e8` (Jetan) or `d3d5` (Martian Chess).
    fn move_to_string(&self, mv: Move) -> String;

    /// Parses `<from><to>` text and checks it is legal here.
    ///
    /// ```
    /// use martian_rules::martian4::MartianChess4;
    /// use martian_rules::{GameState, Move, RulesError};
    ///
    /// let game = MartianChess4::new_game(&Default::default())?;
    /// let mv = game.parse_move("C1-E1")?; // human forms and any case are read
    /// assert_eq!(mv, Move::new(2, 4)); // squares file + 8 * (rank - 1)
    /// assert_eq!(game.move_to_string(mv), "c1e1");
    /// assert!(matches!(game.parse_move("d4d9"), Err(RulesError::BadMoveText { .. })));
    /// assert!(matches!(game.parse_move("a1b2"), Err(RulesError::IllegalMove { .. })));
    /// # Ok::<(), RulesError>(())
    /// ```
    ///
    /// # Errors
    /// [`RulesError::BadMoveText`] for malformed text, [`RulesError::IllegalMove`]
    /// (with the legal moves) for a well-formed move that is not legal.
    fn parse_move(&self, text: &str) -> Result<Move, RulesError>;

    /// A text board, last rank first, `.` for empty squares, with coordinates,
    /// then a status line: the side to move, or the result once the game is over.
    fn board_text(&self) -> String;

    /// [`GameState::board_text`] drawn from `bottom`'s side of the table:
    /// `bottom`'s home rank at the bottom (for `Side::North` the board is
    /// turned half a turn: first rank at the top, files reversed).
    fn board_text_from(&self, bottom: Side) -> String {
        let _ = bottom;
        self.board_text()
    }

    /// Name of a side in this game ("Black"/"Orange", "South"/"North").
    fn side_name(side: Side) -> &'static str;

    /// Name of the player to move: the side's name ([`GameState::side_name`])
    /// in two-player games; the seat (`SW`, `NW`, `NE`, `SE`, martian-chess
    /// §14.3) in the four-player games, where the side is the seat's team.
    fn mover_name(&self) -> &'static str {
        Self::side_name(self.side_to_move())
    }

    /// Name of value player `player` (in `0..num_players()`, as indexed by
    /// [`GameState::player_values`]): by default the name of the side with
    /// that index ([`GameState::side_name`]); four-player free-for-all names
    /// the seat (`SW`, `NW`, `NE`, `SE`, martian-chess §14.1). Game records
    /// name winners with it, and match reports the colours a player played.
    fn player_name(&self, player: usize) -> &'static str {
        Self::side_name(Side::ALL[player % 2])
    }

    /// Who won the finished game, as game records and match results write
    /// it: the value players ([`GameState::player_values`]) with the highest
    /// value, by [`GameState::player_name`]. In a two-sided game that is the
    /// winning side (in the four-player team game the team, `SW+NE`), and
    /// `None` for a draw (equal values). With more value players (four-player
    /// free-for-all) there are no draws, only shares of the win (§14.7): the
    /// seats with the highest value, joined by commas in seat order (`NW`,
    /// `SW,NE`; all four when every value is equal). `None` while the game
    /// is not over.
    fn winner_name(&self) -> Option<String> {
        let values = self.player_values()?;
        let n = self.num_players();
        let values = &values[..n];
        let top = values.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        if n <= 2 && values.iter().all(|&v| v == top) {
            return None;
        }
        let names: Vec<&str> = (0..n).filter(|&i| values[i] == top).map(|i| self.player_name(i)).collect();
        Some(names.join(","))
    }

    /// Policy index of a legal move, in the canonical orientation of the side to
    /// move; in `0..NUM_ACTIONS`, distinct for distinct legal moves.
    fn action_index(&self, mv: Move) -> usize;

    /// The policy indices of `moves` ([`GameState::action_index`] of each,
    /// in order), appended to `out`: the same values for a whole move list,
    /// so that a game can look up what depends only on the position (its
    /// orientation) once. Allocates only when `out` has to grow.
    fn action_indices(&self, moves: &[Move], out: &mut Vec<u32>) {
        out.extend(moves.iter().map(|&m| self.action_index(m) as u32));
    }

    /// The left-right mirror of a policy index: the index, in the mirrored
    /// position (files reversed, [`GameState::mirrored`]), of the mirror image
    /// of the move with index `action`. `None` if `action` is out of range or
    /// the game has no left-right symmetry (the default). Used for mirror
    /// augmentation in training (`train.mirror_augmentation`); with it, the
    /// input planes of the mirrored position are the planes of this one with
    /// every row reversed.
    fn mirror_action(action: usize) -> Option<usize> {
        let _ = action;
        None
    }

    /// The position mirrored left-right (files reversed, everything else
    /// equal), or `None` if the game has no such symmetry (the default). The
    /// mirror carries no history (Jetan's repetitions), as a position string
    /// does not. The tests check [`GameState::mirror_action`] and the planes
    /// against it.
    fn mirrored(&self) -> Option<Self> {
        None
    }

    /// Writes the network input planes in packed form (one
    /// [`PackedPlane`](crate::PackedPlane) per plane: the cells of a plane
    /// that hold its value, as a bit mask), in the canonical orientation of
    /// the side to move (side to move at the bottom). `out.len()` must equal
    /// `INPUT_SHAPE[0]` (at most [`MAX_INPUT_PLANES`](crate::MAX_INPUT_PLANES));
    /// every element is written. This is the one description of a game's
    /// input: [`GameState::encode`] expands it.
    fn encode_packed(&self, out: &mut [crate::PackedPlane]);

    /// Writes the network input planes, shape [`GameState::INPUT_SHAPE`],
    /// row-major `[plane][row][col]`, in the canonical orientation of the side to
    /// move (side to move at the bottom): [`GameState::encode_packed`]
    /// expanded. `out.len()` must equal the product of `INPUT_SHAPE`; every
    /// element is written.
    ///
    /// # Panics
    /// If `out` has the wrong length (a caller's buffer, not user input).
    fn encode(&self, out: &mut [f32]) {
        let [c, h, w] = Self::INPUT_SHAPE;
        assert_eq!(out.len(), c * h * w, "encode: wrong buffer length");
        let mut planes = [crate::PackedPlane::default(); crate::MAX_INPUT_PLANES];
        self.encode_packed(&mut planes[..c]);
        crate::unpack_planes(&planes[..c], h * w, out);
    }
}
