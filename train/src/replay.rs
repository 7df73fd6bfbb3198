//! The replay window: the newest self-play positions, read from shard files.

use std::fs;
use std::path::{Path, PathBuf};

use martian_rules::GameKind;
use martian_selfplay::{check_samples, read_shard, ShardData};
use rand::Rng;

use crate::symmetry::mirror_sample;

/// A training batch in host memory, reused between steps.
#[derive(Clone, Debug, Default)]
pub struct Batch {
    /// `[n * C*H*W]` input planes.
    pub planes: Vec<f32>,
    /// `[n * A]` policy targets.
    pub policy: Vec<f32>,
    /// `[n * A]` legal-move mask, 1 = legal.
    pub legal: Vec<u8>,
    /// `[n]` value targets in `[-1, 1]` for the side to move.
    pub value: Vec<f32>,
    /// `[n]` moves-left targets, plies to the end of the game (0 where the
    /// sample has none).
    pub moves_left: Vec<f32>,
    /// `[n]` 1 where the sample has a moves-left target, else 0 (a shard
    /// written before the target existed): the loss skips rows with 0.
    pub moves_left_mask: Vec<f32>,
    /// `[n]` score targets, final point difference for the side to move in
    /// points (0 where the sample has none).
    pub score: Vec<f32>,
    /// `[n]` 1 where the sample has a score target, else 0.
    pub score_mask: Vec<f32>,
    /// `[n * value_players]` per-player value targets in mover-relative
    /// order (the shards' `values`, a game of more than two value players);
    /// a row from a shard without them holds the zero-sum completion of its
    /// `value` (`martian_search::Evaluation::player_values`). Empty when no
    /// shard of the window has them.
    pub values: Vec<f32>,
    /// Columns of [`Batch::values`] (0 when empty).
    pub value_players: usize,
}

/// Samples held in memory for training (the replay buffer).
pub struct ReplayWindow {
    shards: Vec<ShardData>,
    /// `(shard, row)` of every position in the window.
    index: Vec<(u32, u32)>,
    input_shape: [usize; 3],
    num_actions: usize,
    /// Shard files read.
    pub files: Vec<PathBuf>,
    /// Files skipped as corrupt, unreadable or unfit, with the reason.
    pub skipped: Vec<String>,
    /// Files from which some samples were left out, naming the file and why.
    pub warnings: Vec<String>,
    /// Positions of the newest generation in the window (the new data of the
    /// generation being trained, in the pipeline).
    pub newest_generation_len: usize,
    /// Cumulative sampling weights of `index` when some weight is not 1
    /// (policy surprise weighting); empty = uniform sampling.
    cumulative: Vec<f64>,
}

/// Shard files (`*.npz`, not temporaries) under `dir`, newest first: by the
/// generation in the name (`genNNNN-...`; files without one count as
/// generation 0), then by name, so that the order does not depend on when a
/// file was written (a resumed run writes its shards at other times).
pub fn list_shards(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = fs::read_dir(dir) else { return Vec::new() };
    let mut v: Vec<(u32, PathBuf)> = rd
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            p.extension().and_then(|e| e.to_str()) == Some("npz")
                && !p.file_name().and_then(|n| n.to_str()).unwrap_or(".").starts_with('.')
        })
        .map(|p| (shard_generation(&p), p))
        .collect();
    v.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| b.1.cmp(&a.1)));
    v.into_iter().map(|(_, p)| p).collect()
}

/// The generation `N` of a shard named `genNNNN-...`, else 0.
pub fn shard_generation(p: &Path) -> u32 {
    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
    martian_selfplay::names::parse_generation_prefix(name).map_or(0, |(g, _)| g)
}

/// Positions in every shard under `dir` (unreadable shards count 0): the
/// `N` of [`crate::TrainConfig::window_for`].
pub fn total_positions(dir: &Path) -> usize {
    list_shards(dir).iter().map(|p| martian_selfplay::shard_len(p).unwrap_or(0)).sum()
}

impl ReplayWindow {
    /// Reads the newest shards under `dir` until `window` positions are held.
    ///
    /// Which positions: whole generations are read newest first (see
    /// [`list_shards`]); the rows are then ordered by (generation, game id,
    /// ply), newest first, duplicates of a (game id, ply) pair are dropped,
    /// and the first `window` rows form the window. The window is therefore a
    /// function of the set of samples, not of how games were grouped into
    /// files or when they were written, so a run resumed after a kill trains
    /// on exactly the window of an uninterrupted one.
    ///
    /// Corrupt or incompatible shards are skipped and listed in `skipped`;
    /// samples that fail [`check_samples`] are left out and reported in
    /// `warnings` (one line per file, naming it).
    pub fn load(dir: &Path, window: usize, input_shape: [usize; 3], num_actions: usize) -> ReplayWindow {
        let mut w = ReplayWindow {
            shards: Vec::new(),
            index: Vec::new(),
            input_shape,
            num_actions,
            files: Vec::new(),
            skipped: Vec::new(),
            warnings: Vec::new(),
            newest_generation_len: 0,
            cumulative: Vec::new(),
        };
        // (generation, game id, ply, shard, row) of every usable row.
        let mut rows: Vec<(u32, i64, i32, u32, u32)> = Vec::new();
        let files = list_shards(dir);
        let mut i = 0;
        while i < files.len() {
            let gen = shard_generation(&files[i]);
            if rows.len() >= window {
                break;
            }
            while i < files.len() && shard_generation(&files[i]) == gen {
                let path = &files[i];
                i += 1;
                match read_shard(path, input_shape, num_actions) {
                    Ok(data) => {
                        let check = check_samples(&data);
                        if let Some(msg) = check.describe() {
                            if check.shard_problem.is_some() || check.bad() == data.len() {
                                w.skipped.push(format!("{}: {msg}", path.display()));
                                continue;
                            }
                            w.warnings.push(format!("{}: {msg}", path.display()));
                        }
                        let s = w.shards.len() as u32;
                        rows.extend(
                            (0..data.len())
                                .filter(|&r| check.ok[r])
                                .map(|r| (gen, data.game_id[r], data.ply[r], s, r as u32)),
                        );
                        w.shards.push(data);
                        w.files.push(path.clone());
                    }
                    Err(e) => w.skipped.push(e.to_string()),
                }
            }
        }
        rows.sort_unstable_by(|a, b| (b.0, b.1, b.2).cmp(&(a.0, a.1, a.2)).then((a.3, a.4).cmp(&(b.3, b.4))));
        let before = rows.len();
        rows.dedup_by(|a, b| (a.1, a.2) == (b.1, b.2));
        if rows.len() < before {
            w.warnings.push(format!(
                "{}: {} duplicate (game id, ply) samples left out",
                dir.display(),
                before - rows.len()
            ));
        }
        rows.truncate(window);
        w.newest_generation_len = rows.first().map_or(0, |n| rows.iter().take_while(|r| r.0 == n.0).count());
        w.index = rows.into_iter().map(|r| (r.3, r.4)).collect();
        let weight = |&(s, r): &(u32, u32)| w.shards[s as usize].weight[r as usize] as f64;
        if w.index.iter().any(|x| weight(x) != 1.0) {
            let mut total = 0.0;
            w.cumulative = w
                .index
                .iter()
                .map(|x| {
                    total += weight(x);
                    total
                })
                .collect();
            if total.is_nan() || total <= 0.0 {
                w.cumulative.clear();
            }
        }
        w
    }

    /// Positions in the window.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// True when the window is empty.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Fills `batch` with `n` positions drawn with replacement: uniformly, or
    /// in proportion to the samples' weights when some weight is not 1
    /// (policy surprise weighting).
    /// With `mirror = Some(game)` each sample is mirrored with probability 1/2
    /// (planes and policy; the value, moves-left and score targets are the
    /// same for the mirrored position and travel with it unchanged).
    pub fn fill_batch<R: Rng>(&self, rng: &mut R, n: usize, mirror: Option<GameKind>, batch: &mut Batch) {
        let Batch {
            planes,
            policy,
            legal,
            value,
            moves_left,
            moves_left_mask,
            score,
            score_mask,
            values,
            value_players,
        } = batch;
        let players = self.shards.iter().filter_map(|d| d.values.as_ref().map(|v| v.ncols())).max().unwrap_or(0);
        *value_players = players;
        values.resize(n * players, 0.0);
        let [c, h, w] = self.input_shape;
        let ps = c * h * w;
        let a = self.num_actions;
        planes.resize(n * ps, 0.0);
        policy.resize(n * a, 0.0);
        legal.resize(n * a, 0);
        value.resize(n, 0.0);
        for v in [&mut *moves_left, &mut *moves_left_mask, &mut *score, &mut *score_mask] {
            v.resize(n, 0.0);
        }
        for i in 0..n {
            let k = if self.cumulative.is_empty() {
                rng.gen_range(0..self.index.len())
            } else {
                let total = *self.cumulative.last().expect("non-empty");
                let u = rng.gen::<f64>() * total;
                self.cumulative.partition_point(|&c| c <= u).min(self.index.len() - 1)
            };
            let (s, r) = self.index[k];
            let d = &self.shards[s as usize];
            let r = r as usize;
            let src_p = d.planes.as_slice().expect("standard layout");
            planes[i * ps..(i + 1) * ps].copy_from_slice(&src_p[r * ps..(r + 1) * ps]);
            let src_pol = d.policy.as_slice().expect("standard layout");
            policy[i * a..(i + 1) * a].copy_from_slice(&src_pol[r * a..(r + 1) * a]);
            let src_legal = d.legal.as_slice().expect("standard layout");
            legal[i * a..(i + 1) * a].copy_from_slice(&src_legal[r * a..(r + 1) * a]);
            value[i] = d.value[r];
            (moves_left[i], moves_left_mask[i]) = d.moves_left.as_ref().map_or((0.0, 0.0), |a| (a[r], 1.0));
            (score[i], score_mask[i]) = d.score.as_ref().map_or((0.0, 0.0), |a| (a[r], 1.0));
            if players > 0 {
                let row = &mut values[i * players..(i + 1) * players];
                match d.values.as_ref().filter(|v| v.ncols() == players) {
                    Some(v) => row.iter_mut().zip(v.row(r)).for_each(|(x, &y)| *x = y),
                    None => {
                        let z = d.value[r];
                        row.iter_mut()
                            .enumerate()
                            .for_each(|(k, x)| *x = if k == 0 { z } else { -z / (players - 1) as f32 });
                    }
                }
            }
            if let Some(g) = mirror {
                if rng.gen::<bool>() {
                    mirror_sample(
                        g,
                        &mut planes[i * ps..(i + 1) * ps],
                        self.input_shape,
                        &mut policy[i * a..(i + 1) * a],
                        &mut legal[i * a..(i + 1) * a],
                    );
                }
            }
        }
    }
}
