//! The frontends (`play`, `analyse`, `engine`, `analysis`, `show`,
//! `evaluate`) agree on how they run the network and which rules they play:
//! libtorch's threads are set and the network warmed up in one place
//! (`martian_run::runtime::ready_network`) before the first timed search.

use crate::common::{err, mz, mz_stdin};

/// `play`, `analyse` and `analysis` set their libtorch threads (`--threads`,
/// default 1, 0 = all cores) and warm the network up before the first search,
/// saying so on stderr; without a network there is nothing to warm.
#[test]
fn commands_that_run_the_network_set_threads_and_warm_up() {
    let o = mz_stdin(&["play", "--game", "martian-chess", "--visits", "4"], "hint\nquit\n");
    assert!(o.status.success(), "{}", err(&o));
    assert!(err(&o).contains("martian-zero: torch threads 1; network warmed up (one pass, "), "{}", err(&o));
    let o = mz(&["analyse", "--game", "martian-chess", "--visits", "4", "--threads", "2"]);
    assert!(o.status.success(), "{}", err(&o));
    assert!(err(&o).contains("torch threads 2; network warmed up"), "{}", err(&o));
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    let o = mz_stdin(&["analysis", "--game", "martian-chess", "--threads", "0"], "");
    assert!(o.status.success(), "{}", err(&o));
    assert!(err(&o).contains(&format!("torch threads {cores}; network warmed up")), "{}", err(&o));
    let o = mz(&["analyse", "--game", "martian-chess", "--visits", "4", "--model", "none"]);
    assert!(o.status.success() && !err(&o).contains("warmed up"), "{}", err(&o));
}
