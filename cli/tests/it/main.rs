//! The command line's integration tests, one module per subject, in one test
//! binary so that libtorch is linked once for all of them (link time: BENCHMARKS.md). Each
//! module runs the built `martian-zero` binary; names are module-qualified
//! (`cargo test -p martian-zero --test it damage::`).
//!
//! The modules share one process and run on the default parallel test
//! threads, so none sets process-wide state (environment variables, the
//! current directory, resource limits and signal dispositions are set only on
//! the child processes they start), and the tests that draw from libtorch's
//! process-wide random generator hold [`common::torch_rng`] while they do.
//! The browser tests are a second binary (`tests/browser`, which says why).

mod common;

mod analysis;
mod analysis_client;
mod chaos;
mod checkpoint_rules;
mod commands;
mod damage;
mod devices;
mod distributed;
mod engine_protocol;
mod export_golden;
mod four_player;
mod frontends;
mod models;
mod pipeline;
mod pipeline_resume;
mod positions;
mod precision;
mod trap_positions;
