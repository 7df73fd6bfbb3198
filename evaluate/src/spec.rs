//! Player specs: the text that names a player on the command line and in
//! configs (`evaluate --a/--b`, `[evaluate] ladder`, `pipeline.bootstrap_player`),
//! parsed once here, and the one mapping from a spec to the parameters of an
//! MCTS player ([`PlayerSpec::mcts_parts`]).

use std::path::{Path, PathBuf};

use martian_search::Limits;

/// A player spec that does not parse: the message names the spec and the problem.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SpecError(pub String);

/// A player named on the command line:
///
/// * a checkpoint path: MCTS with the network, `[evaluate] simulations` visits;
/// * `mcts:model=PATH,visits=N,movetime=MS` (every key optional; no model = uniform priors;
///   with `movetime` the move ends at the first batch after MS milliseconds, or at N visits);
///   `level=L` instead of `visits`: a strength level ([`martian_search::Level`]: its visits
///   and move-choice temperature); `veto_depth=D` (0 to 8, default 0 = off): the play-time
///   tactical check ([`martian_search::Veto`]), an alpha-beta search `D` plies deep after the
///   chosen move that replaces a proven loss by the most visited move not proven lost;
/// * `uniform` (MCTS without a network), `random`, `greedy`;
/// * `alphabeta:depth=N`, `alphabeta:movetime=MS`, `alphabeta:nodes=N`, with
///   optional `tt=MIB` and evaluation options (Jetan: `values=seed000`).
#[derive(Clone, Debug, PartialEq)]
pub enum PlayerSpec {
    /// MCTS with this checkpoint.
    Net(PathBuf),
    /// MCTS with an optional checkpoint (uniform priors without), visit count
    /// (default `[evaluate] simulations`, or no visit limit with a movetime)
    /// and optional time per move (`movetime=MS`; whichever limit comes first).
    Mcts {
        /// Checkpoint.
        model: Option<PathBuf>,
        /// Simulations per move.
        visits: Option<u32>,
        /// Wall time per move, milliseconds.
        movetime: Option<u64>,
        /// A strength level (1 to [`martian_search::Level::MAX`]): its visits
        /// (instead of `visits`) and its move-choice temperature.
        level: Option<u8>,
        /// Without a model: the game's alpha-beta evaluation as the value
        /// (and policy) instead of uniform priors and value 0
        /// (`static=SCALE[,static_policy=T]`).
        statics: Option<StaticValues>,
        /// Plies of the play-time tactical check ([`martian_search::Veto`],
        /// `veto_depth=D`); 0 = none.
        veto_depth: u32,
    },
    /// MCTS with the uniform evaluator.
    Uniform,
    /// Uniformly random moves.
    Random,
    /// One-ply greedy.
    Greedy,
    /// The alpha-beta baseline.
    AlphaBeta {
        /// Per-move limits (at least one set).
        limits: Limits,
        /// Transposition table size, MiB.
        tt_mib: usize,
        /// Evaluation options, `key=value`.
        eval_options: Vec<(String, String)>,
        /// The spec text (the player's name in reports).
        text: String,
    },
}

/// The hand-made evaluation of an `mcts:static=SCALE[,static_policy=T]`
/// player ([`martian_search::StaticValueEvaluator`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StaticValues {
    /// Leaf values `tanh(e / scale)` of the game's alpha-beta evaluation `e`.
    pub scale: u32,
    /// Priors `softmax(one-ply evaluation / T)` instead of equal ones
    /// (evaluation units).
    pub policy: Option<u32>,
}

fn parse_num<T: std::str::FromStr + TryFrom<i128>>(spec: &str, key: &str, v: &str) -> Result<T, SpecError> {
    if let Ok(x) = v.parse() {
        return Ok(x);
    }
    // Say what is wrong with a whole number that does not fit: its sign or its size.
    Err(SpecError(match v.parse::<i128>() {
        Ok(n) if n < 0 => format!("player {spec:?}: {key}={v} must not be negative"),
        Ok(_) => format!("player {spec:?}: {key}={v} is too large"),
        Err(_) => format!("player {spec:?}: {key}={v:?} is not a whole number"),
    }))
}

/// [`parse_num`] of a count that must be at least 1 (`what` names it in the error).
fn parse_positive(spec: &str, key: &str, v: &str, what: &str) -> Result<u32, SpecError> {
    match parse_num(spec, key, v)? {
        0 => Err(SpecError(format!("player {spec:?}: {what} must be >= 1"))),
        n => Ok(n),
    }
}

impl PlayerSpec {
    /// Parses one player spec (see the type's documentation).
    ///
    /// # Errors
    /// An unknown kind or key, a bad number, or an alpha-beta spec without a limit.
    pub fn parse(s: &str) -> Result<PlayerSpec, SpecError> {
        let s = s.trim();
        if s.is_empty() {
            return Err(SpecError("empty player spec".into()));
        }
        let kv = |rest: &str| -> Result<Vec<(String, String)>, SpecError> {
            let mut out: Vec<(String, String)> = Vec::new();
            if rest.trim().is_empty() {
                return Ok(out);
            }
            for t in rest.split(',') {
                if t.trim().is_empty() {
                    return Err(SpecError(format!("player {s:?}: an empty key=value item (a stray comma?)")));
                }
                let (k, v) = t
                    .split_once('=')
                    .ok_or_else(|| SpecError(format!("player {s:?}: expected key=value, got {t:?}")))?;
                let k = k.trim().to_string();
                if out.iter().any(|(o, _)| *o == k) {
                    return Err(SpecError(format!("player {s:?}: key {k:?} is given twice")));
                }
                out.push((k, v.trim().to_string()));
            }
            Ok(out)
        };
        Ok(match s {
            "random" => PlayerSpec::Random,
            "greedy" => PlayerSpec::Greedy,
            "uniform" => PlayerSpec::Uniform,
            _ if s.starts_with("alphabeta:") || s == "alphabeta" => {
                let mut limits = Limits::default();
                let mut tt_mib = 16;
                let mut eval_options = Vec::new();
                for (k, v) in kv(s.strip_prefix("alphabeta").unwrap_or("").trim_start_matches(':'))? {
                    match k.as_str() {
                        "depth" => {
                            let d: u32 = parse_num(s, &k, &v)?;
                            if d == 0 || d > 64 {
                                return Err(SpecError(format!("player {s:?}: depth must be in 1..=64")));
                            }
                            limits.depth = Some(d);
                        }
                        "movetime" => {
                            let ms: u64 = parse_num(s, &k, &v)?;
                            if !(1..=3_600_000).contains(&ms) {
                                return Err(SpecError(format!("player {s:?}: movetime must be in 1..=3600000 (milliseconds)")));
                            }
                            limits.movetime = Some(std::time::Duration::from_millis(ms));
                        }
                        "nodes" => {
                            let n: u64 = parse_num(s, &k, &v)?;
                            if n == 0 {
                                return Err(SpecError(format!("player {s:?}: nodes must be >= 1")));
                            }
                            limits.nodes = Some(n);
                        }
                        "tt" => {
                            tt_mib = parse_num(s, &k, &v)?;
                            if !(1..=65_536).contains(&tt_mib) {
                                return Err(SpecError(format!("player {s:?}: tt (transposition table MiB) must be in 1..=65536")));
                            }
                        }
                        // The evaluation's options (Jetan: values=...); checked against the game later.
                        "values" => eval_options.push((k, v)),
                        _ => return Err(SpecError(format!(
                            "player {s:?}: unknown key {k:?} (known: depth, movetime, nodes, tt, and values for Jetan)"
                        ))),
                    }
                }
                if limits == Limits::default() {
                    return Err(SpecError(format!("player {s:?}: alphabeta needs a limit: depth=N, movetime=MS or nodes=N")));
                }
                PlayerSpec::AlphaBeta { limits, tt_mib, eval_options, text: s.to_string() }
            }
            _ if s.starts_with("mcts:") || s == "mcts" => {
                let (mut model, mut visits, mut movetime, mut level) = (None, None, None, None);
                let (mut static_scale, mut static_policy) = (None, None);
                let mut veto_depth = 0;
                for (k, v) in kv(s.strip_prefix("mcts").unwrap_or("").trim_start_matches(':'))? {
                    match k.as_str() {
                        "model" => model = Some(PathBuf::from(v)),
                        "movetime" => {
                            let ms: u64 = parse_num(s, &k, &v)?;
                            if ms == 0 || ms > 3_600_000 {
                                return Err(SpecError(format!("player {s:?}: movetime must be in 1..=3600000 (milliseconds)")));
                            }
                            movetime = Some(ms);
                        }
                        "visits" => visits = Some(parse_positive(s, &k, &v, "visits")?),
                        "level" => {
                            let n: u32 = parse_num(s, &k, &v)?;
                            let l = martian_search::Level::get(n).map_err(|e| SpecError(format!("player {s:?}: {e}")))?;
                            level = Some(l.number);
                        }
                        "static" => static_scale = Some(parse_positive(s, &k, &v, "static (the value scale)")?),
                        "static_policy" => {
                            static_policy = Some(parse_positive(s, &k, &v, "static_policy (the policy temperature)")?)
                        }
                        "veto_depth" => {
                            veto_depth = parse_num(s, &k, &v)?;
                            martian_search::check_veto_depth(veto_depth).map_err(|e| SpecError(format!("player {s:?}: {e}")))?;
                        }
                        _ => {
                            return Err(SpecError(format!(
                                "player {s:?}: unknown key {k:?} (known: model, visits, movetime, level, static, static_policy, veto_depth)"
                            )))
                        }
                    }
                }
                if level.is_some() && visits.is_some() {
                    return Err(SpecError(format!(
                        "player {s:?}: a level sets the visits: give level or visits, not both"
                    )));
                }
                if model.is_some() && static_scale.is_some() {
                    return Err(SpecError(format!(
                        "player {s:?}: static values replace a network's: give model or static, not both"
                    )));
                }
                let statics = match (static_scale, static_policy) {
                    (Some(scale), policy) => Some(StaticValues { scale, policy }),
                    (None, Some(_)) => {
                        return Err(SpecError(format!("player {s:?}: static_policy needs static=SCALE")))
                    }
                    (None, None) => None,
                };
                PlayerSpec::Mcts { model, visits, movetime, level, statics, veto_depth }
            }
            p if p.contains(':') && !Path::new(p).exists() => {
                return Err(SpecError(format!("unknown player {p:?}: expected a checkpoint path, random, greedy, uniform, mcts:model=PATH,visits=N,movetime=MS or alphabeta:depth=N|movetime=MS|nodes=N")))
            }
            p => {
                if !Path::new(p).exists() {
                    return Err(SpecError(format!("player {p:?}: no such checkpoint file (or expected random, greedy, uniform, mcts:..., alphabeta:...)")));
                }
                PlayerSpec::Net(PathBuf::from(p))
            }
        })
    }

    /// Parses a comma-separated list of specs; a `key=value` item without a
    /// `kind:` prefix continues the previous spec, so
    /// `alphabeta:depth=1,alphabeta:depth=2,mcts:model=a.safetensors,visits=8`
    /// gives three players. `;` also separates.
    ///
    /// # Errors
    /// As [`PlayerSpec::parse`], or an empty list.
    pub fn parse_list(s: &str) -> Result<Vec<PlayerSpec>, SpecError> {
        let mut items: Vec<String> = Vec::new();
        for part in s.split(';') {
            for tok in part.split(',') {
                let t = tok.trim();
                if t.is_empty() {
                    return Err(SpecError(format!(
                        "player list {s:?}: an empty item (two separators in a row, or one at an end?)"
                    )));
                }
                let cont = t.split_once('=').is_some_and(|(k, _)| !k.contains(':') && !k.contains('/'));
                match items.last_mut() {
                    Some(last) if cont => {
                        last.push(',');
                        last.push_str(t);
                    }
                    _ => items.push(t.to_string()),
                }
            }
            items.push(String::new()); // `;` ends a spec
        }
        let specs: Vec<PlayerSpec> =
            items.iter().filter(|i| !i.is_empty()).map(|i| PlayerSpec::parse(i)).collect::<Result<_, _>>()?;
        if specs.is_empty() {
            return Err(SpecError(format!("no player in {s:?}")));
        }
        Ok(specs)
    }

    /// The checkpoint this player needs, if any.
    pub fn checkpoint(&self) -> Option<&Path> {
        match self {
            PlayerSpec::Net(p) | PlayerSpec::Mcts { model: Some(p), .. } => Some(p),
            _ => None,
        }
    }
}

/// What an MCTS player needs besides its evaluator: the name it plays under
/// in results, its checkpoint (`None`: uniform priors and value 0), its
/// visit cap per move and its time per move.
#[derive(Clone, Debug, PartialEq)]
pub struct MctsParts {
    /// The player's name in results, e.g. `mcts:model=gen0004.safetensors,visits=32`.
    pub name: String,
    /// The checkpoint of the network, if any.
    pub model: Option<PathBuf>,
    /// Visits per move; `u32::MAX` when only a movetime limits the move.
    pub visits: u32,
    /// Wall time per move, milliseconds (whichever limit comes first).
    pub movetime: Option<u64>,
    /// Move-choice temperature (a strength level's; 0 = the best move,
    /// [`martian_search::SearchResult::sample_move`]).
    pub temperature: f32,
    /// Without a model: the hand-made evaluation (`static=SCALE[,static_policy=T]`).
    pub statics: Option<StaticValues>,
    /// Plies of the play-time tactical check (`veto_depth=D`,
    /// [`martian_search::Veto`]); 0 = none. Only the sequential arena's
    /// players check ([`crate::MctsPlayer::with_veto`]).
    pub veto_depth: u32,
}

impl PlayerSpec {
    /// The MCTS parameters of this spec, `None` for players that are not MCTS
    /// (random, greedy, alpha-beta). `default_visits` is the visit count of a
    /// spec that names none (`[evaluate] simulations`); a spec with a
    /// movetime and no visits has no visit cap (`u32::MAX`) and its name says
    /// only the time. Checkpoints are named by their file name.
    pub fn mcts_parts(&self, default_visits: u32) -> Option<MctsParts> {
        let file = |p: &Path| p.file_name().and_then(|n| n.to_str()).unwrap_or("?").to_string();
        let veto_depth = match self {
            PlayerSpec::Mcts { veto_depth, .. } => *veto_depth,
            _ => 0,
        };
        let (mut base, model, mut visits, movetime, level, statics) = match self {
            PlayerSpec::Net(p) => (format!("mcts:model={}", file(p)), Some(p.clone()), None, None, None, None),
            PlayerSpec::Mcts { model: Some(p), visits, movetime, level, .. } => {
                (format!("mcts:model={}", file(p)), Some(p.clone()), *visits, *movetime, *level, None)
            }
            PlayerSpec::Mcts { model: None, visits, movetime, level, statics, .. } => {
                let name = match statics {
                    Some(StaticValues { scale, policy: Some(t) }) => format!("mcts:static={scale},static_policy={t}"),
                    Some(StaticValues { scale, policy: None }) => format!("mcts:static={scale}"),
                    None => "mcts:uniform".to_string(),
                };
                (name, None, *visits, *movetime, *level, *statics)
            }
            PlayerSpec::Uniform => ("mcts:uniform".to_string(), None, None, None, None, None),
            PlayerSpec::Random | PlayerSpec::Greedy | PlayerSpec::AlphaBeta { .. } => return None,
        };
        let level = level.and_then(|n| martian_search::Level::get(u32::from(n)).ok());
        if let Some(l) = level {
            base = format!("{base},level={}", l.number);
            visits = Some(l.visits);
        }
        let temperature = level.map_or(0.0, |l| l.temperature);
        let (name, visits) = match (visits, movetime) {
            (Some(v), Some(ms)) => (format!("{base},visits={v},movetime={ms}"), v),
            (None, Some(ms)) => (format!("{base},movetime={ms}"), u32::MAX),
            (v, None) => {
                let v = v.unwrap_or(default_visits);
                (format!("{base},visits={v}"), v)
            }
        };
        let name = match level {
            // The level's name says its visits without repeating them.
            Some(_) => name.replace(&format!(",visits={visits}"), ""),
            None => name,
        };
        let name = if veto_depth > 0 { format!("{name},veto_depth={veto_depth}") } else { name };
        Some(MctsParts { name, model, visits, movetime, temperature, statics, veto_depth })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `level=L`: the level's visits and temperature, named in the player's
    /// name; a level with visits, or outside 1..=6, is refused.
    #[test]
    fn a_level_sets_visits_and_temperature() {
        let s = PlayerSpec::parse("mcts:model=net.safetensors,level=3").unwrap();
        let parts = s.mcts_parts(64).unwrap();
        let l = martian_search::Level::get(3).unwrap();
        assert_eq!((parts.visits, parts.temperature), (l.visits, l.temperature));
        assert_eq!(parts.name, "mcts:model=net.safetensors,level=3");
        let st = PlayerSpec::parse("mcts:static=600,visits=400").unwrap().mcts_parts(64).unwrap();
        let want = Some(StaticValues { scale: 600, policy: None });
        assert_eq!((st.name.as_str(), st.statics, st.model), ("mcts:static=600,visits=400", want, None));
        for (bad, why) in [
            ("mcts:static=0", "must be >= 1"),
            ("mcts:static=x", "static=\"x\" is not a whole number"),
            ("mcts:static=-5", "static=-5 must not be negative"),
            ("mcts:static=4294967296", "static=4294967296 is too large"),
            ("mcts:model=a.safetensors,static=600", "give model or static"),
            ("mcts:static_policy=100", "needs static=SCALE"),
            ("mcts:static=600,static_policy=0", "must be >= 1"),
        ] {
            let e = PlayerSpec::parse(bad).unwrap_err().to_string();
            assert!(e.contains(why), "{bad}: {e}");
        }
        let sp = PlayerSpec::parse("mcts:static=600,static_policy=100").unwrap().mcts_parts(64).unwrap();
        let want = Some(StaticValues { scale: 600, policy: Some(100) });
        assert_eq!((sp.name.as_str(), sp.statics), ("mcts:static=600,static_policy=100,visits=64", want));
        let plain = PlayerSpec::parse("mcts:visits=16").unwrap().mcts_parts(64).unwrap();
        assert_eq!((plain.visits, plain.temperature), (16, 0.0));
        let e = PlayerSpec::parse("mcts:level=3,visits=8").unwrap_err().to_string();
        assert!(e.contains("give level or visits"), "{e}");
        for bad in ["mcts:level=0", "mcts:level=7", "mcts:level=x"] {
            let e = PlayerSpec::parse(bad).unwrap_err().to_string();
            assert!(e.contains("level"), "{bad}: {e}");
        }
    }

    #[test]
    fn parses_player_specs_and_lists() {
        let e = PlayerSpec::parse("alphabeta:depht=2").unwrap_err().to_string();
        assert!(e.contains("unknown key \"depht\"") && e.contains("depth"), "{e}");
        let e = PlayerSpec::parse("alphabeta:depth=2,tt=4,colour=red").unwrap_err().to_string();
        assert!(e.contains("unknown key \"colour\""), "{e}");
        assert!(PlayerSpec::parse("alphabeta:depth=2,values=seed000").is_ok());
        for bad in ["greedy,,random", "greedy,random,", "greedy;;random", ",greedy"] {
            let e = PlayerSpec::parse_list(bad).unwrap_err().to_string();
            assert!(e.contains("empty item"), "{bad}: {e}");
        }
        let e = PlayerSpec::parse_list("alphabeta:depth=1,tt=99999999").unwrap_err().to_string();
        assert!(e.contains("tt"), "{e}");
        let l = PlayerSpec::parse_list(
            "alphabeta:depth=1,alphabeta:depth=2, alphabeta:movetime=50,tt=4;mcts:visits=8,random",
        )
        .unwrap();
        assert_eq!(l.len(), 5);
        match &l[2] {
            PlayerSpec::AlphaBeta { limits, tt_mib, text, .. } => {
                assert_eq!(limits.movetime, Some(std::time::Duration::from_millis(50)));
                assert_eq!((*tt_mib, text.as_str()), (4, "alphabeta:movetime=50,tt=4"));
            }
            s => panic!("{s:?}"),
        }
        assert_eq!(
            l[3],
            PlayerSpec::Mcts {
                model: None,
                visits: Some(8),
                movetime: None,
                level: None,
                statics: None,
                veto_depth: 0
            }
        );
        assert_eq!(
            PlayerSpec::parse("mcts:visits=400,movetime=200").unwrap(),
            PlayerSpec::Mcts {
                model: None,
                visits: Some(400),
                movetime: Some(200),
                level: None,
                statics: None,
                veto_depth: 0
            }
        );
        assert!(PlayerSpec::parse("mcts:movetime=0").is_err());
        assert_eq!(l[4], PlayerSpec::Random);
        for bad in [
            "alphabeta",
            "alphabeta:depth=x",
            "alphabeta:depth=0",
            "alphabeta:nodes=0",
            "alphabeta:movetime=0",
            "alphabeta:movetime=3600001",
            "mcts:visits=0",
            "mcts:foo=1",
            "nope:x=1",
            "/no/such.safetensors",
            "",
            "mcts:visits=10,visits=20",
            "alphabeta:depth=2,",
            "alphabeta:depth=2,,tt=4",
        ] {
            assert!(PlayerSpec::parse(bad).is_err(), "{bad}");
        }
    }

    /// `veto_depth=D`: the play-time check's plies, in the player's name; 0
    /// is the default (no check, the name unchanged); outside 0..=8 refused.
    #[test]
    fn veto_depth_is_parsed_named_and_range_checked() {
        let p = PlayerSpec::parse("mcts:static=600,visits=400,veto_depth=4").unwrap().mcts_parts(64).unwrap();
        assert_eq!((p.name.as_str(), p.veto_depth), ("mcts:static=600,visits=400,veto_depth=4", 4));
        let off = PlayerSpec::parse("mcts:visits=8,veto_depth=0").unwrap().mcts_parts(64).unwrap();
        assert_eq!((off.name.as_str(), off.veto_depth), ("mcts:uniform,visits=8", 0));
        let net = PlayerSpec::parse("mcts:model=net.safetensors,level=3,veto_depth=2").unwrap().mcts_parts(64).unwrap();
        assert_eq!((net.name.as_str(), net.veto_depth), ("mcts:model=net.safetensors,level=3,veto_depth=2", 2));
        assert_eq!(PlayerSpec::parse("uniform").unwrap().mcts_parts(8).unwrap().veto_depth, 0);
        for (bad, why) in [
            ("mcts:veto_depth=9", "veto_depth must be in 0..=8"),
            ("mcts:veto_depth=-1", "must not be negative"),
            ("mcts:veto_depth=x", "not a whole number"),
        ] {
            let e = PlayerSpec::parse(bad).unwrap_err().to_string();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }

    #[test]
    fn mcts_parts_name_the_player_and_its_limits() {
        let p = |s: &str| PlayerSpec::parse(s).unwrap().mcts_parts(32);
        assert_eq!(p("uniform").unwrap().name, "mcts:uniform,visits=32");
        let m = p("mcts:visits=400,movetime=200").unwrap();
        assert_eq!((m.name.as_str(), m.visits, m.movetime), ("mcts:uniform,visits=400,movetime=200", 400, Some(200)));
        let m = p("mcts:movetime=50").unwrap();
        assert_eq!((m.name.as_str(), m.visits), ("mcts:uniform,movetime=50", u32::MAX));
        let net = PlayerSpec::Net(PathBuf::from("runs/x/models/gen0004.safetensors")).mcts_parts(8).unwrap();
        assert_eq!(net.name, "mcts:model=gen0004.safetensors,visits=8");
        assert_eq!(net.model.as_deref(), Some(Path::new("runs/x/models/gen0004.safetensors")));
        for s in ["random", "greedy", "alphabeta:depth=1"] {
            assert_eq!(p(s), None, "{s}");
        }
    }
}
