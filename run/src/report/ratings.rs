//! The report's rating fit: the anchor, connected groups of players, and
//! players placed only by the prior.

use anyhow::{bail, Result};
use martian_evaluate::Ratings;
use std::collections::{BTreeMap, BTreeSet};

use super::*;

/// Players of the anchor's group (not themselves perfect) that are linked to
/// the anchor only through one-sided pairings (one player won every game
/// between them): their distance from the anchor has no finite
/// maximum-likelihood value and is set by the prior.
pub(super) fn prior_placed(matches: &[Match], anchor: &str, r: &Ratings) -> Vec<String> {
    let pair = pairings(matches);
    let mut adj: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (&(a, b), &(s, n)) in &pair {
        if n > 0 && s > 0.0 && s < n as f64 {
            adj.entry(a).or_default().push(b);
            adj.entry(b).or_default().push(a);
        }
    }
    let mut seen = BTreeSet::from([anchor]);
    let mut stack = vec![anchor];
    while let Some(p) = stack.pop() {
        for &q in adj.get(p).map(|v| v.as_slice()).unwrap_or(&[]) {
            if seen.insert(q) {
                stack.push(q);
            }
        }
    }
    r.players
        .iter()
        .filter(|p| p.relative_to.is_none() && !p.perfect && !seen.contains(p.name.as_str()))
        .map(|p| p.name.clone())
        .collect()
}

/// Aggregated pairings `(a, b) -> (points of a, games)` with `a < b`.
pub(super) fn pairings(matches: &[Match]) -> BTreeMap<(&str, &str), (f64, u32)> {
    let mut pair: BTreeMap<(&str, &str), (f64, u32)> = BTreeMap::new();
    for m in matches {
        let (k, s) = if m.a <= m.b {
            ((m.a.as_str(), m.b.as_str()), m.wins as f64 + 0.5 * m.draws as f64)
        } else {
            ((m.b.as_str(), m.a.as_str()), m.losses as f64 + 0.5 * m.draws as f64)
        };
        let e = pair.entry(k).or_default();
        e.0 += s;
        e.1 += m.wins + m.draws + m.losses;
    }
    pair
}

/// The players of the largest group linked by informative pairings (neither
/// side won every game: their distances are measured, not set by the prior);
/// most players, then most games. With no informative pairing, by any games.
pub(super) fn largest_group(matches: &[Match]) -> BTreeSet<String> {
    let pairs = pairings(matches);
    let informative = pairs.values().any(|&(s, n)| n > 0 && s > 0.0 && s < n as f64);
    let mut adj: BTreeMap<&str, Vec<(&str, u32)>> = BTreeMap::new();
    for (&(a, b), &(s, n)) in &pairs {
        if n > 0 && (!informative || (s > 0.0 && s < n as f64)) {
            adj.entry(a).or_default().push((b, n));
            adj.entry(b).or_default().push((a, n));
        }
    }
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    let mut best: (BTreeSet<String>, u32) = (BTreeSet::new(), 0);
    for &start in adj.keys() {
        if !seen.insert(start) {
            continue;
        }
        let mut group = BTreeSet::from([start.to_string()]);
        let mut games = 0;
        let mut stack = vec![start];
        while let Some(p) = stack.pop() {
            for &(q, n) in &adj[p] {
                games += n;
                if seen.insert(q) {
                    group.insert(q.to_string());
                    stack.push(q);
                }
            }
        }
        if (group.len(), games) > (best.0.len(), best.1) {
            best = (group, games);
        }
    }
    best.0
}

/// The anchor: `wanted` (which must be a player), else from the largest
/// group of players linked by informative results ([`largest_group`]):
/// `alphabeta:depth=1`, else `random`, else generation 0, else its first
/// player (one that won or lost every game only as a last resort).
pub(super) fn choose_anchor(players: &[String], matches: &[Match], wanted: Option<&str>) -> Result<Option<String>> {
    if let Some(w) = wanted {
        if players.iter().any(|p| p == w) {
            return Ok(Some(w.to_string()));
        }
        if players.is_empty() {
            bail!("--anchor {w}: the run has no evaluation matches yet");
        }
        bail!("--anchor {w}: no such player in the run's matches; players: {}", players.join(", "));
    }
    let main = largest_group(matches);
    // A player that won or lost every game is a poor anchor: the others'
    // distance from it would rest on the prior.
    let mixed = |p: &str| {
        let (mut pts, mut n) = (0.0, 0u32);
        for m in matches {
            let g = m.wins + m.draws + m.losses;
            if m.a == p {
                pts += m.wins as f64 + 0.5 * m.draws as f64;
            } else if m.b == p {
                pts += m.losses as f64 + 0.5 * m.draws as f64;
            } else {
                continue;
            }
            n += g;
        }
        n > 0 && pts > 0.0 && pts < n as f64
    };
    let gen0 = main.iter().find(|p| generation_of(p) == Some(0)).cloned();
    let order: Vec<String> = ["alphabeta:depth=1".to_string(), "random".to_string()]
        .into_iter()
        .chain(gen0)
        .chain(main.iter().cloned())
        .filter(|p| main.contains(p))
        .collect();
    Ok(order.iter().find(|p| mixed(p)).or(order.first()).or(players.first()).cloned())
}

// ---------------------------------------------------------------- charts
