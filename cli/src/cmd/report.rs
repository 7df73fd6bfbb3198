//! `martian-zero report`: writes the report of a run directory
//! ([`martian_run::report`]) and prints its warnings.

use std::path::PathBuf;

use anyhow::Result;

/// Arguments of `report`.
#[derive(clap::Args)]
pub struct Args {
    /// Run directory.
    #[arg(long, value_parser = martian_run::store::parse_local_run_dir)]
    run_dir: PathBuf,
    /// Player rated 0 (default: `alphabeta:depth=1`, else `random`, else generation 0).
    /// Must be a player of the run's matches.
    #[arg(long)]
    anchor: Option<String>,
}

/// Runs `report`.
pub fn run(a: Args) -> Result<()> {
    // Reports are written into run directories only.
    martian_run::rundir::RunDir::check_is_run(&a.run_dir)?;
    let (md, html) = martian_run::report::write_report(&a.run_dir, a.anchor.as_deref())?;
    println!("wrote {} and {}", md.display(), html.display());
    let warnings = std::fs::read_to_string(&md).unwrap_or_default();
    for l in warnings.lines().filter(|l| l.starts_with("> **Warning:**")) {
        eprintln!("warning: {}", l.trim_start_matches("> **Warning:**").trim());
    }
    Ok(())
}
