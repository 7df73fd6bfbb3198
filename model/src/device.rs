//! Device selection: `device = "auto" | "cpu" | "cuda" | "cuda:N"` in configs.

use tch::Device;

use crate::error::ModelError;

/// Parses a device name. `auto` picks CUDA device 0 when available, else the CPU
/// (`Device::cuda_if_available`).
///
/// # Errors
/// [`ModelError::Config`] for an unknown name, or `cuda` when CUDA is not available.
pub fn parse_device(name: &str) -> Result<Device, ModelError> {
    match name {
        "auto" => Ok(Device::cuda_if_available()),
        "cpu" => Ok(Device::Cpu),
        "cuda" | "gpu" => cuda(0),
        s if s.starts_with("cuda:") => {
            let n: usize =
                s[5..].parse().map_err(|_| ModelError::Config(format!("bad device {s:?}: expected cuda:N")))?;
            cuda(n)
        }
        s => Err(ModelError::Config(format!("unknown device {s:?}: expected auto, cpu, cuda or cuda:N"))),
    }
}

fn cuda(n: usize) -> Result<Device, ModelError> {
    if tch::Cuda::is_available() && n < tch::Cuda::device_count() as usize {
        Ok(Device::Cuda(n))
    } else {
        Err(ModelError::Config(format!(
            "device cuda:{n} requested but CUDA is not available (devices: {})",
            if tch::Cuda::is_available() { tch::Cuda::device_count() } else { 0 }
        )))
    }
}

/// One line for start-up logs: the device used and whether CUDA is available.
pub fn describe_device(d: Device) -> String {
    format!(
        "device: {d:?} (CUDA available: {}, CUDA devices: {}, CPU threads: {})",
        tch::Cuda::is_available(),
        tch::Cuda::device_count(),
        tch::get_num_threads()
    )
}
