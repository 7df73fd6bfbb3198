//! The replay window: the newest self-play positions, read from shard files.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use martian_rules::GameKind;
use martian_selfplay::{read_shard, ShardData};
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
    /// `[n]` value targets, +1 / 0 / -1 for the side to move.
    pub value: Vec<f32>,
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
    /// Files skipped as corrupt or unreadable, with the reason.
    pub skipped: Vec<String>,
}

/// Shard files (`*.npz`, not temporaries) under `dir`, newest first
/// (modification time, then name).
pub fn list_shards(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = fs::read_dir(dir) else { return Vec::new() };
    let mut v: Vec<(SystemTime, PathBuf)> = rd
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            p.extension().and_then(|e| e.to_str()) == Some("npz")
                && !p.file_name().and_then(|n| n.to_str()).unwrap_or(".").starts_with('.')
        })
        .map(|p| (fs::metadata(&p).and_then(|m| m.modified()).unwrap_or(SystemTime::UNIX_EPOCH), p))
        .collect();
    v.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| b.1.cmp(&a.1)));
    v.into_iter().map(|(_, p)| p).collect()
}

impl ReplayWindow {
    /// Reads the newest shards under `dir` until `window` positions are held.
    /// Corrupt or incompatible shards are skipped and listed in `skipped`.
    pub fn load(dir: &Path, window: usize, input_shape: [usize; 3], num_actions: usize) -> ReplayWindow {
        let mut w = ReplayWindow {
            shards: Vec::new(),
            index: Vec::new(),
            input_shape,
            num_actions,
            files: Vec::new(),
            skipped: Vec::new(),
        };
        for path in list_shards(dir) {
            if w.index.len() >= window {
                break;
            }
            match read_shard(&path, input_shape, num_actions) {
                Ok(data) => {
                    let s = w.shards.len() as u32;
                    let take = data.len().min(window - w.index.len());
                    // Newest rows of the shard are the last ones.
                    let start = data.len() - take;
                    w.index.extend((start..data.len()).map(|r| (s, r as u32)));
                    w.shards.push(data);
                    w.files.push(path);
                }
                Err(e) => w.skipped.push(e.to_string()),
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

    /// Fills `batch` with `n` positions drawn uniformly with replacement.
    /// With `mirror = Some(game)` each sample is mirrored with probability 1/2.
    pub fn fill_batch<R: Rng>(&self, rng: &mut R, n: usize, mirror: Option<GameKind>, batch: &mut Batch) {
        let Batch { planes, policy, legal, value } = batch;
        let [c, h, w] = self.input_shape;
        let ps = c * h * w;
        let a = self.num_actions;
        planes.resize(n * ps, 0.0);
        policy.resize(n * a, 0.0);
        legal.resize(n * a, 0);
        value.resize(n, 0.0);
        for i in 0..n {
            let (s, r) = self.index[rng.gen_range(0..self.index.len())];
            let d = &self.shards[s as usize];
            let r = r as usize;
            let src_p = d.planes.as_slice().expect("standard layout");
            planes[i * ps..(i + 1) * ps].copy_from_slice(&src_p[r * ps..(r + 1) * ps]);
            let src_pol = d.policy.as_slice().expect("standard layout");
            policy[i * a..(i + 1) * a].copy_from_slice(&src_pol[r * a..(r + 1) * a]);
            let src_legal = d.legal.as_slice().expect("standard layout");
            legal[i * a..(i + 1) * a].copy_from_slice(&src_legal[r * a..(r + 1) * a]);
            value[i] = d.value[r];
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
