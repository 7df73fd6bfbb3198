//! Errors of the model crate.

use thiserror::Error;

/// What can go wrong building, loading or running a network.
#[derive(Debug, Error)]
pub enum ModelError {
    /// A libtorch error, with what was being done.
    #[error("{context}: {source}")]
    Torch {
        /// What was being done.
        context: String,
        /// The libtorch error.
        source: tch::TchError,
    },
    /// A file could not be read or written.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A checkpoint's metadata could not be parsed.
    #[error("checkpoint metadata {path}: {message}")]
    BadMetadata {
        /// Path of the `.json` sidecar.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// A weights file (`.safetensors`) is not readable as such: a malformed
    /// header, a truncated file, or values that are not finite (a corrupt file).
    #[error("checkpoint weights {path}: {message}")]
    BadWeights {
        /// Path of the `.safetensors` file.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// A checkpoint was made for another game, rules or architecture, or its
    /// weights do not fit its own metadata (the differences say which).
    #[error("checkpoint {path} is inconsistent or made for something else: {differences}")]
    Mismatch {
        /// Path of the checkpoint.
        path: String,
        /// Each differing field, `field: checkpoint X, config Y`, separated by `; `.
        differences: String,
    },
    /// A bad device name or model setting.
    #[error("{0}")]
    Config(String),
}
