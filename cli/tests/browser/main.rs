//! The browser tests: the run report in headless Chromium and the web page
//! (its WebAssembly build, Node and Chromium), one test binary apart from
//! `tests/it`. Kept apart because `web` builds the web crate with nested
//! `cargo` runs (natively and for wasm32) and drives a browser for minutes:
//! in `tests/it`'s process it would share the cores with the tests that bound
//! a time (`engine_protocol`'s `movetime` and `quit`, `distributed`'s waits),
//! and this way the browser half can be built and run on its own
//! (`cargo test -p martian-zero --test browser`).

#[path = "../it/common.rs"]
mod common;

mod report_browser;
mod web;
