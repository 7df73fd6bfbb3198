//! The overlapped driver (`play_games_on_devices`, `docs/architecture.md`): with one group
//! it plays the lockstep driver's games; with a backend whose outputs do not
//! depend on the batch, groups and devices change nothing in the games; the
//! same seed gives the same games in the same order; a second device starts
//! while the first is busy; failures of a device end the run with an error.

use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use martian_rules::jetan::{Jetan, JetanRules};
use martian_rules::martian::{MartianChess, MartianRules};
use martian_rules::GameState;
use martian_search::{Backend, BackendEvaluator, CachedEvaluator, DeviceBatch, EvalError, MctsConfig, SimulatedDevice};
use martian_selfplay::{play_games, play_games_on_devices, FinishedGame, PlayParams, SelfplayConfig, SelfplayStats};

fn cfg(groups: u32, games_in_flight: u32) -> (SelfplayConfig, MctsConfig) {
    let sp = SelfplayConfig {
        games_in_flight,
        groups,
        simulations: 16,
        cheap_simulations: 4,
        full_search_prob: 0.5,
        ..Default::default()
    };
    (sp, MctsConfig { leaves_per_batch: 2, ..Default::default() })
}

fn sim() -> SimulatedDevice {
    SimulatedDevice::parse("batch_ms=0,per_position_us=0").unwrap()
}

fn ids(n: u64) -> Vec<u64> {
    (0..n).map(|k| (3 << 40) | k).collect()
}

/// Games of the lockstep driver with the cache around the backend.
fn lockstep<G: GameState>(
    start: &G,
    n: u64,
    sp: &SelfplayConfig,
    mcts: &MctsConfig,
) -> (Vec<FinishedGame>, SelfplayStats) {
    let ids = ids(n);
    let params = PlayParams { start, game_ids: &ids, seed: 9, model_name: "sim".into() };
    let mut ev = CachedEvaluator::new(BackendEvaluator::new(sim()), sp.cache_size);
    let mut out = Vec::new();
    let st = play_games(&params, sp, mcts, &mut ev, |g, _| {
        out.push(g);
        Ok(())
    })
    .unwrap();
    (out, st)
}

/// Games of the overlapped driver on `devices`.
fn overlapped<G: GameState, B: Backend + Send>(
    start: &G,
    n: u64,
    sp: &SelfplayConfig,
    mcts: &MctsConfig,
    devices: &mut [B],
) -> Result<(Vec<FinishedGame>, SelfplayStats), EvalError> {
    let ids = ids(n);
    let params = PlayParams { start, game_ids: &ids, seed: 9, model_name: "sim".into() };
    let mut out = Vec::new();
    let st = play_games_on_devices(&params, sp, mcts, devices, |g, _| {
        out.push(g);
        Ok(())
    })?;
    Ok((out, st))
}

fn records(games: &[FinishedGame]) -> Vec<String> {
    games.iter().map(|g| serde_json::to_string(&g.record).unwrap()).collect()
}

/// Records and samples in id order.
fn by_id(games: &[FinishedGame]) -> Vec<(String, Vec<martian_selfplay::Sample>)> {
    let mut v: Vec<_> = games.iter().map(|g| (serde_json::to_string(&g.record).unwrap(), g.samples.clone())).collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

fn one_group_is_lockstep<G: GameState>(start: G) {
    let (sp, mcts) = cfg(1, 4);
    let (a, sa) = lockstep(&start, 7, &sp, &mcts);
    let (b, sb) = overlapped(&start, 7, &sp, &mcts, &mut [sim()]).unwrap();
    // Same games, finished in the same order, with the same samples.
    assert_eq!(records(&a), records(&b));
    for (x, y) in a.iter().zip(&b) {
        assert!(x.samples == y.samples, "samples of game {} differ", x.record.game_id);
    }
    assert_eq!((sa.games, sa.moves, sa.samples, sa.evaluations), (sb.games, sb.moves, sb.samples, sb.evaluations));
    assert!(sb.device_rows > 0 && sb.device_rows < sb.evaluations, "the cache is used: {sb:?}");
    assert_eq!(sb.devices, 1);
}

#[test]
fn one_group_plays_the_lockstep_games_jetan() {
    one_group_is_lockstep(Jetan::new_game(&JetanRules { max_plies: 60, ..Default::default() }).unwrap());
}

#[test]
fn one_group_plays_the_lockstep_games_martian_chess() {
    one_group_is_lockstep(MartianChess::new_game(&MartianRules::default()).unwrap());
}

/// A simulated device that logs every batch it runs: per row, its packed
/// planes and its legal moves' action indices.
#[derive(Clone)]
struct Logged {
    dev: SimulatedDevice,
    log: Vec<Vec<(String, Vec<u32>)>>,
}

impl Backend for Logged {
    fn run(&mut self, batch: &mut DeviceBatch) -> Result<(), EvalError> {
        let c = batch.planes_per_row();
        let rows = (0..batch.rows)
            .map(|r| {
                let planes = format!("{:?}", &batch.planes[r * c..(r + 1) * c]);
                (planes, batch.actions[batch.offsets[r]..batch.offsets[r + 1]].to_vec())
            })
            .collect();
        self.log.push(rows);
        self.dev.run(batch)
    }
}

/// With one group the device gets the lockstep driver's batches, row for
/// row: the cache (looked up before the last batch is cached, then brought
/// up to date) answers as the lockstep driver's, also when it is so small
/// that it is cleared every few batches.
fn one_group_sends_the_lockstep_batches<G: GameState>(start: G) {
    for cache_size in [100_000, 16] {
        let (mut sp, mcts) = cfg(1, 4);
        sp.cache_size = cache_size;
        let ids = ids(6);
        let params = PlayParams { start: &start, game_ids: &ids, seed: 9, model_name: "sim".into() };
        let logged = Logged { dev: sim(), log: Vec::new() };
        let mut ev = CachedEvaluator::new(BackendEvaluator::new(logged.clone()), sp.cache_size);
        play_games(&params, &sp, &mcts, &mut ev, |_, _| Ok(())).unwrap();
        let (hits, lookups) = ev.stats();
        assert!(hits > 0 && hits < lookups, "cache {cache_size}: {hits} hits of {lookups}");
        let mut devs = [logged];
        let st = play_games_on_devices(&params, &sp, &mcts, &mut devs, |_, _| Ok(())).unwrap();
        let want = &ev.inner_mut().backend.log;
        assert_eq!(devs[0].log.len(), want.len(), "cache {cache_size}: batches");
        assert!(devs[0].log == *want, "cache {cache_size}: the device got other rows");
        assert_eq!(st.device_rows, want.iter().map(|b| b.len() as u64).sum::<u64>());
    }
}

#[test]
fn one_group_sends_the_lockstep_batches_jetan() {
    one_group_sends_the_lockstep_batches(Jetan::new_game(&JetanRules { max_plies: 60, ..Default::default() }).unwrap());
}

#[test]
fn one_group_sends_the_lockstep_batches_martian_chess() {
    one_group_sends_the_lockstep_batches(MartianChess::new_game(&MartianRules::default()).unwrap());
}

#[test]
fn groups_and_devices_change_nothing_for_a_batch_independent_device() {
    let start = MartianChess::new_game(&MartianRules::default()).unwrap();
    let (sp, mcts) = cfg(1, 6);
    let (base, _) = overlapped(&start, 13, &sp, &mcts, &mut [sim()]).unwrap();
    let base = by_id(&base);
    assert_eq!(base.len(), 13);
    for (groups, devices) in [(2, 1), (3, 1), (1, 2), (2, 2)] {
        let (sp, mcts) = cfg(groups, 6);
        let mut devs = vec![sim(); devices];
        let (g, st) = overlapped(&start, 13, &sp, &mcts, &mut devs).unwrap();
        assert_eq!(st.devices as usize, devices);
        assert!(by_id(&g) == base, "{groups} groups on {devices} devices play other games");
    }
}

/// A device that returns at once and says when its outputs are back (the
/// simulated device's `wait=deadline`) plays the same games, and the driver
/// waits for each batch: the wall time covers the device time, which is the
/// passes' simulated time.
#[test]
fn a_device_that_says_when_its_outputs_are_back_is_waited_for() {
    let start = MartianChess::new_game(&MartianRules::default()).unwrap();
    let (sp, mcts) = cfg(1, 6);
    let (base, _) = overlapped(&start, 9, &sp, &mcts, &mut [sim()]).unwrap();
    let (sp, mcts) = cfg(2, 6);
    let dev = SimulatedDevice::parse("batch_ms=2,per_position_us=0,wait=deadline").unwrap();
    let (g, st) = overlapped(&start, 9, &sp, &mcts, &mut [dev]).unwrap();
    assert!(by_id(&g) == by_id(&base), "other games");
    assert!(st.batches > 10, "{st:?}");
    let want = st.batches as f64 * 0.002;
    assert!((st.device_seconds - want).abs() < 1e-6, "device time {} for {} batches", st.device_seconds, st.batches);
    assert!(
        st.seconds >= want,
        "the driver did not wait for the outputs: {} s for {want} s of device time",
        st.seconds
    );
}

#[test]
fn the_same_seed_gives_the_same_games_in_the_same_order_with_groups() {
    let start = Jetan::new_game(&JetanRules { max_plies: 50, ..Default::default() }).unwrap();
    let (sp, mcts) = cfg(3, 5);
    let mut devs = vec![sim(), sim()];
    let (a, _) = overlapped(&start, 11, &sp, &mcts, &mut devs).unwrap();
    let (b, _) = overlapped(&start, 11, &sp, &mcts, &mut devs).unwrap();
    assert_eq!(records(&a), records(&b));
    let mut got: Vec<u64> = a.iter().map(|g| g.record.game_id).collect();
    got.sort_unstable();
    assert_eq!(got, ids(11), "every id played once");
}

/// A simulated device whose outputs depend on the batch (every row's win and
/// loss probabilities swap when the batch has an odd number of rows), so a
/// game depends on the games it shares its batches with, and whose passes
/// take a random extra 0-300 µs, different in every run, so that the
/// worker threads interleave differently from run to run.
struct Jittery {
    inner: SimulatedDevice,
    state: u64,
}

impl Jittery {
    fn new() -> Self {
        let seed =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(7, |d| d.as_nanos() as u64);
        Jittery { inner: sim(), state: seed }
    }
}

impl Backend for Jittery {
    fn run(&mut self, batch: &mut DeviceBatch) -> Result<(), EvalError> {
        self.inner.run(batch)?;
        if batch.rows % 2 == 1 {
            batch.wdl.chunks_mut(3).for_each(|w| w.swap(0, 2));
        }
        self.state = martian_rules::mix64(self.state);
        std::thread::sleep(Duration::from_micros(self.state % 300));
        Ok(())
    }
}

/// The games, their samples and the order in which they reach the callback
/// depend on the seed, the groups and the devices only: not on the number
/// of threads (which sets how many worker threads share the groups) nor on
/// how the threads' turns interleave, also with a device whose outputs
/// depend on the batch.
#[test]
fn games_and_their_order_do_not_depend_on_threads_or_timing() {
    let start = MartianChess::new_game(&MartianRules::default()).unwrap();
    let (sp, mcts) = cfg(4, 8);
    let run = |threads: usize, sp: &SelfplayConfig| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| overlapped(&start, 20, sp, &mcts, &mut [Jittery::new()]).unwrap().0)
    };
    let base = run(2, &sp);
    assert_eq!(base.len(), 20);
    for threads in [1, 2, 4] {
        let other = run(threads, &sp);
        assert_eq!(records(&other), records(&base), "{threads} threads: other games or another order");
        assert!(other.iter().zip(&base).all(|(x, y)| x.samples == y.samples), "{threads} threads: other samples");
    }
    // The device's batch dependence shows: one group batches the games otherwise.
    let (one, _) = cfg(1, 8);
    assert!(by_id(&run(2, &one)) != by_id(&base), "the batch-dependent device plays the same games in one group");
}

/// With fewer games in flight than groups, every id is still played once
/// (the groups without a game of their own are left out).
#[test]
fn every_id_is_played_with_more_groups_than_games_in_flight() {
    let start = MartianChess::new_game(&MartianRules::default()).unwrap();
    for (groups, in_flight) in [(3, 2), (4, 1), (2, 3)] {
        let (sp, mcts) = cfg(groups, in_flight);
        let (g, st) = overlapped(&start, 7, &sp, &mcts, &mut [sim()]).unwrap();
        let mut got: Vec<u64> = g.iter().map(|g| g.record.game_id).collect();
        got.sort_unstable();
        assert_eq!(got, ids(7), "{groups} groups, {in_flight} in flight");
        assert_eq!(st.games, 7);
    }
}

/// A device whose first pass waits (up to 20 s) until the other device has
/// started one: only a driver that runs the CPU phase of the second device's
/// games while the first device is busy lets it go on at once.
struct Rendezvous {
    me: usize,
    started: Arc<(Mutex<[bool; 2]>, Condvar)>,
    waited_in_vain: bool,
    inner: SimulatedDevice,
}

impl Backend for Rendezvous {
    fn run(&mut self, batch: &mut DeviceBatch) -> Result<(), EvalError> {
        let (lock, cv) = &*self.started;
        let mut s = lock.lock().unwrap();
        let first = !s[self.me];
        s[self.me] = true;
        cv.notify_all();
        if first && self.me == 0 {
            let (s, timeout) = cv.wait_timeout_while(s, Duration::from_secs(20), |s| !s[1]).unwrap();
            self.waited_in_vain = timeout.timed_out() && !s[1];
        }
        self.inner.run(batch)
    }
}

#[test]
fn a_second_device_starts_while_the_first_is_busy() {
    let start = MartianChess::new_game(&MartianRules::default()).unwrap();
    let (sp, mcts) = cfg(1, 3);
    let started = Arc::new((Mutex::new([false; 2]), Condvar::new()));
    let mut devs: Vec<Rendezvous> =
        (0..2).map(|me| Rendezvous { me, started: started.clone(), waited_in_vain: false, inner: sim() }).collect();
    let (g, _) = overlapped(&start, 6, &sp, &mcts, &mut devs).unwrap();
    assert_eq!(g.len(), 6);
    assert!(!devs[0].waited_in_vain, "device 1 got no batch while device 0 was busy");
}

/// Fails (error, panic or short output) at its `at`-th pass.
struct Faulty {
    at: usize,
    calls: usize,
    how: u8,
}

impl Backend for Faulty {
    fn run(&mut self, batch: &mut DeviceBatch) -> Result<(), EvalError> {
        self.calls += 1;
        sim().run(batch)?;
        if self.calls == self.at {
            match self.how {
                0 => return Err(EvalError("out of device memory".into())),
                1 => panic!("driver crashed"),
                _ => {
                    batch.logits.pop();
                }
            }
        }
        Ok(())
    }
}

#[test]
fn device_failures_end_the_run_with_an_error() {
    let start = MartianChess::new_game(&MartianRules::default()).unwrap();
    for (how, want) in [(0u8, "out of device memory"), (1, "the device failed: driver crashed"), (2, "policy logits")] {
        for groups in [1, 2] {
            let (sp, mcts) = cfg(groups, 4);
            let mut devs = vec![Faulty { at: 5, calls: 0, how }];
            let err = overlapped(&start, 8, &sp, &mcts, &mut devs).map(|_| ()).unwrap_err();
            assert!(err.0.contains(want), "{groups} groups: {err}");
        }
    }
    let (sp, mcts) = cfg(2, 4);
    let ids = ids(4);
    let params = PlayParams { start: &start, game_ids: &ids, seed: 9, model_name: "sim".into() };
    let err = play_games_on_devices(&params, &sp, &mcts, &mut [sim(), sim()], |_, _| Err("disk full".into()))
        .map(|_| ())
        .unwrap_err();
    assert_eq!(err.0, "disk full");
    let none: &mut [SimulatedDevice] = &mut [];
    assert!(play_games_on_devices(&params, &sp, &mcts, none, |_, _| Ok(())).is_err());
}
