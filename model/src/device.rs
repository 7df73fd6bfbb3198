//! Device selection: `device = "auto" | "cpu" | "cuda" | "cuda:N"` in configs,
//! and for self-play on several devices `"cuda:all"` or a list
//! (`"cuda:0,cuda:1"`, or a TOML array of names).

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

/// Parses a device list for self-play: `cuda:all` (every CUDA device), a
/// comma-separated list of names as [`parse_device`] reads them
/// (`cuda:0,cuda:1`; `cpu,cpu` gives two CPU "devices", each with its own
/// network replica and thread, which is how the several-device path is tested
/// without a GPU), or one name. The first device is the one training and
/// matches use.
///
/// # Errors
/// [`ModelError::Config`] for an empty item, an unknown name, a CUDA device
/// that is not there, or `cuda:all` without CUDA.
pub fn parse_devices(spec: &str) -> Result<Vec<Device>, ModelError> {
    let spec = spec.trim();
    if spec == "cuda:all" || spec == "gpu:all" {
        let n = if tch::Cuda::is_available() { tch::Cuda::device_count() as usize } else { 0 };
        if n == 0 {
            return Err(ModelError::Config("device cuda:all requested but CUDA is not available".into()));
        }
        return Ok((0..n).map(Device::Cuda).collect());
    }
    spec.split(',')
        .map(|item| {
            let item = item.trim();
            if item.is_empty() {
                Err(ModelError::Config(format!("device list {spec:?} has an empty item")))
            } else {
                parse_device(item)
            }
        })
        .collect()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_lists_parse_and_name_their_errors() {
        assert_eq!(parse_devices("cpu").unwrap(), vec![Device::Cpu]);
        assert_eq!(parse_devices("cpu, cpu,cpu").unwrap(), vec![Device::Cpu; 3]);
        let e = parse_devices("cpu,,cpu").unwrap_err().to_string();
        assert!(e.contains("empty item"), "{e}");
        let e = parse_devices("cpu,tpu").unwrap_err().to_string();
        assert!(e.contains("\"tpu\""), "{e}");
        if !tch::Cuda::is_available() {
            assert!(parse_devices("cuda:all").unwrap_err().to_string().contains("cuda:all"));
            assert!(parse_devices("cpu,cuda:1").unwrap_err().to_string().contains("cuda:1"));
        }
    }
}
