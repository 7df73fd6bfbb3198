//! The process's runtime: thread counts and the devices of training, matches
//! and self-play (config keys `threads`, `torch_threads`, `device`;
//! `configs/README.md`), and the one set-up of every command that runs the
//! network ([`set_torch_threads`], [`warm_up`]).

use std::time::{Duration, Instant};

use anyhow::Result;
use martian_model::{NetEvaluator, PolicyValueNet};
use martian_rules::GameState;
use martian_search::Evaluator;
use tch::Device;

use crate::config::RunConfig;

/// Libtorch intra-op threads for a requested count `n` (0 = all cores): the
/// rule of the config's `torch_threads` and of every command's `--threads`.
pub fn torch_threads(n: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    (if n == 0 { cores } else { n }).clamp(1, 1024)
}

/// Sets libtorch's intra-op threads to [`torch_threads`]`(n)` on the calling
/// thread (the setting is per thread for OpenMP: call it on the thread that
/// runs the network) and returns the count. Every command that runs the
/// network sets its threads here: `play`, `analyse`, `engine`, `analysis`,
/// and through [`setup_runtime`] `evaluate`, `selfplay`, `train` and the
/// pipeline. One thread is fastest for the small batches of one search on
/// shared cores (`BENCHMARKS.md`).
pub fn set_torch_threads(n: usize) -> usize {
    let t = torch_threads(n);
    tch::set_num_threads(t as i32);
    t
}

/// Readies `net` for timed searches on the calling thread: sets its threads
/// ([`set_torch_threads`]`(threads)`) and runs one forward pass of `pos` on
/// `device` (libtorch's first pass allocates and initialises, and would
/// otherwise be counted in the first search). Returns the pass's time.
///
/// # Errors
/// The pass fails (a network of another game or shape).
pub fn warm_up<G: GameState>(net: &PolicyValueNet, device: Device, threads: usize, pos: &G) -> Result<Duration> {
    set_torch_threads(threads);
    let mut moves = Vec::new();
    pos.legal_moves(&mut moves);
    if moves.is_empty() {
        // A finished game: no search to ready.
        return Ok(Duration::ZERO);
    }
    let mut ev = NetEvaluator::<G>::new(net, device, 1);
    let mut out = Vec::new();
    let t0 = Instant::now();
    ev.evaluate(&[pos], &[&moves[..]], &mut out).map_err(|e| anyhow::anyhow!("warming up the network: {e}"))?;
    Ok(t0.elapsed())
}

/// The stderr line of a command that warmed its network up:
/// `martian-zero: torch threads 1; network warmed up (one pass, 12 ms)`.
pub fn warm_up_line(threads: usize, pass: Duration) -> String {
    format!(
        "martian-zero: torch threads {}; network warmed up (one pass, {} ms)",
        torch_threads(threads),
        pass.as_millis()
    )
}

/// The set-up of a command that searches with the network (`play`,
/// `analyse`, `analysis`): sets libtorch's threads on the calling thread and,
/// with a network, warms it up on `pos` ([`warm_up`]) and prints
/// [`warm_up_line`] on stderr.
///
/// # Errors
/// The warm-up pass fails.
pub fn ready_network<G: GameState>(
    net: Option<&PolicyValueNet>,
    device: Device,
    threads: usize,
    pos: &G,
) -> Result<()> {
    set_torch_threads(threads);
    if let Some(n) = net {
        let t = warm_up(n, device, threads, pos)?;
        eprintln!("{}", warm_up_line(threads, t));
    }
    Ok(())
}

/// Sets thread counts and picks the device; prints the start-up line.
pub fn setup_runtime(cfg: &RunConfig) -> Result<Device> {
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let pick = |n: usize| if n == 0 { cores } else { n };
    set_torch_threads(cfg.torch_threads);
    let _ = rayon::ThreadPoolBuilder::new().num_threads(pick(cfg.threads)).build_global();
    let devices = selfplay_devices(cfg)?;
    let device = devices[0];
    if devices.len() > 1 {
        let names: Vec<String> = devices.iter().map(|&d| device_name(d)).collect();
        eprintln!(
            "martian-zero: {}; self-play on {} devices: {}",
            describe_device(device),
            devices.len(),
            names.join(", ")
        );
    } else {
        eprintln!("martian-zero: {}", describe_device(device));
    }
    Ok(device)
}

/// The devices of self-play (config `device`: one name, `cuda:all` or a
/// list); the first is the one [`setup_runtime`] returns for training and
/// matches.
///
/// # Errors
/// A bad device name, or a CUDA device that is not there.
pub fn selfplay_devices(cfg: &RunConfig) -> Result<Vec<Device>> {
    let devices = martian_model::parse_devices(&cfg.device).map_err(|e| anyhow::anyhow!("device: {e}"))?;
    anyhow::ensure!(!devices.is_empty(), "device: no device given");
    Ok(devices)
}

/// A device as the config and the engine protocol name it: `cpu`, `cuda:0`.
pub fn device_name(d: Device) -> String {
    match d {
        Device::Cpu => "cpu".into(),
        Device::Cuda(n) => format!("cuda:{n}"),
        other => format!("{other:?}").to_lowercase(),
    }
}

/// The start-up line: `device cpu (CUDA: not available; CPU threads: 2)`.
pub fn describe_device(d: Device) -> String {
    let cuda = if tch::Cuda::is_available() {
        format!("{} device(s)", tch::Cuda::device_count())
    } else {
        "not available".into()
    };
    format!("device {} (CUDA: {cuda}; CPU threads: {})", device_name(d), tch::get_num_threads())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--threads n` and `torch_threads`: 0 is every core, others are kept
    /// (bounded to 1..=1024).
    #[test]
    fn torch_threads_follow_one_rule() {
        let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
        assert_eq!(torch_threads(0), cores);
        assert_eq!(torch_threads(3), 3);
        assert_eq!(torch_threads(5000), 1024);
        assert_eq!(set_torch_threads(1), 1);
        assert_eq!(tch::get_num_threads(), 1);
    }
}
