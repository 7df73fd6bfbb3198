//! The process's runtime: thread counts and the devices of training, matches
//! and self-play (config keys `threads`, `torch_threads`, `device`;
//! `configs/README.md`).

use anyhow::Result;
use tch::Device;

use crate::config::RunConfig;

/// Sets thread counts and picks the device; prints the start-up line.
pub fn setup_runtime(cfg: &RunConfig) -> Result<Device> {
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let pick = |n: usize| if n == 0 { cores } else { n };
    tch::set_num_threads(pick(cfg.torch_threads) as i32);
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
