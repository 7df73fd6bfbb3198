//! What a process undoes when it is interrupted (Ctrl-C, SIGTERM, SIGHUP)
//! before it ends: the claims it holds (`workers/w<id>.lock`, leases in an
//! object store) and the working copy of a run on an object store.
//!
//! Everything else a kill may interrupt is repaired by the next run (files are
//! written whole, `docs/training.md`, "Kills and resumes"), so an interrupted
//! process needs to undo only what would otherwise outlive it: a claim that
//! would keep a restarted process (on another host: a new Kubernetes pod)
//! waiting for `--lease-seconds`, and a private directory nobody would remove.
//! Each holder registers its clean-up with [`on_interrupt`] and unregisters it
//! by dropping the returned [`Registered`] (when it cleans up itself).

use std::cell::Cell;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, RwLock, RwLockReadGuard};

type Cleanup = Box<dyn FnOnce() + Send>;

/// A set of clean-ups by registration number.
struct Registry {
    cleanups: Mutex<BTreeMap<u64, Cleanup>>,
    next: AtomicU64,
}

impl Registry {
    const fn new() -> Registry {
        Registry { cleanups: Mutex::new(BTreeMap::new()), next: AtomicU64::new(0) }
    }

    fn add(&'static self, f: Cleanup) -> Registered {
        let id = self.next.fetch_add(1, Ordering::SeqCst);
        self.cleanups.lock().unwrap_or_else(|e| e.into_inner()).insert(id, f);
        Registered { registry: self, id }
    }

    fn run(&self) -> usize {
        let all = std::mem::take(&mut *self.cleanups.lock().unwrap_or_else(|e| e.into_inner()));
        let n = all.len();
        for (_, f) in all.into_iter().rev() {
            f();
        }
        n
    }
}

static PROCESS: Registry = Registry::new();

/// A clean-up registered with [`on_interrupt`]; dropping it unregisters it.
#[must_use = "dropping it unregisters the clean-up at once"]
pub struct Registered {
    registry: &'static Registry,
    id: u64,
}

impl Drop for Registered {
    fn drop(&mut self) {
        // Taken out under the lock, dropped after it: a clean-up may own something whose drop
        // unregisters its own clean-up (a working copy held by a push-on-interrupt closure).
        let cleanup = self.registry.cleanups.lock().unwrap_or_else(|e| e.into_inner()).remove(&self.id);
        drop(cleanup);
    }
}

/// Registers `f` to run if the process is interrupted while the returned
/// [`Registered`] lives.
pub fn on_interrupt(f: impl FnOnce() + Send + 'static) -> Registered {
    PROCESS.add(Box::new(f))
}

/// Runs (and removes) every registered clean-up, the most recent first.
/// Returns how many ran.
pub fn run_cleanups() -> usize {
    PROCESS.run()
}

/// The gate of the writes that may create directories in a run directory or
/// a working copy: held shared by each such write ([`writing`]), taken
/// exclusively once by the handler, which so waits for the writes in progress
/// before the clean-ups remove a working copy (a write of another thread after
/// the removal would make the copy again, and nobody would remove it).
struct Gate {
    lock: RwLock<()>,
    /// Set (under `lock`) when the handler starts: later writes wait for the end.
    closing: AtomicBool,
}

thread_local! {
    /// How many [`Writing`]s this thread holds (only the outermost holds the gate:
    /// a nested shared lock could wait behind the handler's exclusive one).
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    /// The handler's thread: its own writes (the `interrupted:` line) never wait.
    static HANDLER: Cell<bool> = const { Cell::new(false) };
}

impl Gate {
    const fn new() -> Gate {
        Gate { lock: RwLock::new(()), closing: AtomicBool::new(false) }
    }

    fn enter(&'static self, wait: std::time::Duration) -> Writing {
        if HANDLER.with(Cell::get) || DEPTH.with(Cell::get) > 0 {
            DEPTH.with(|d| d.set(d.get() + 1));
            return Writing { _gate: None };
        }
        loop {
            let gate = self.lock.read().unwrap_or_else(|e| e.into_inner());
            if !self.closing.load(Ordering::SeqCst) {
                DEPTH.with(|d| d.set(1));
                return Writing { _gate: Some(gate) };
            }
            drop(gate);
            // The handler ends the process once its clean-ups are done (each bounded).
            std::thread::sleep(wait);
        }
    }

    fn close(&self) {
        HANDLER.with(|h| h.set(true));
        let _all = self.lock.write().unwrap_or_else(|e| e.into_inner());
        self.closing.store(true, Ordering::SeqCst);
    }
}

static WRITES: Gate = Gate::new();

/// A write in progress ([`writing`]); dropping it ends the write.
#[must_use = "the write is protected only while this lives"]
pub struct Writing {
    _gate: Option<RwLockReadGuard<'static, ()>>,
}

impl Drop for Writing {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
    }
}

/// Marks the start of a write that may create directories (a shard, a
/// checkpoint, a file of a working copy), to be held until the write is done.
/// Once the process is being interrupted, a thread other than the handler's
/// waits here until the process ends: it never makes a working copy again
/// after the clean-ups removed it.
pub fn writing() -> Writing {
    WRITES.enter(std::time::Duration::from_secs(3600))
}

/// What the handler says first: the message of the latest [`install`].
type Say = Box<dyn Fn() + Send>;
static SAY: Mutex<Option<Say>> = Mutex::new(None);
static INSTALLED: std::sync::Once = std::sync::Once::new();

/// Makes `say` (what was kept, how to continue) the first thing done on
/// Ctrl-C, SIGTERM or SIGHUP, once the writes in progress are done
/// ([`writing`]); then come the registered clean-ups, then the
/// process ends as Ctrl-C ends it ([`die_of_sigint`]). The handler is set
/// once per process; a later call replaces only the message, so a command
/// installs a plain one at its start (a stop during start-up, before the
/// run is open, still releases the claims taken so far) and a precise one
/// once it knows the run.
pub fn install(say: impl Fn() + Send + 'static) {
    *SAY.lock().unwrap_or_else(|e| e.into_inner()) = Some(Box::new(say));
    INSTALLED.call_once(|| {
        let r = ctrlc::set_handler(|| {
            WRITES.close();
            if let Some(say) = SAY.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
                say();
            }
            run_cleanups();
            die_of_sigint();
        });
        if let Err(e) = r {
            eprintln!("warning: no Ctrl-C handler: {e}");
        }
    });
}

/// The command line of this process, quoted for a POSIX shell.
pub fn shell_command() -> String {
    std::env::args()
        .map(|a| {
            let plain = !a.is_empty() && a.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
            if plain {
                a
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Ends the process as Ctrl-C does without a handler (killed by SIGINT: the
/// shell sees status 130). Not `std::process::exit`: that runs libtorch's exit
/// handlers while its worker threads still run, which can crash.
pub fn die_of_sigint() -> ! {
    // SAFETY: resetting a signal's disposition and raising it are
    // async-signal-safe calls without memory effects; `_exit` ends the process
    // at once if the signal did not.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_DFL);
        libc::raise(libc::SIGINT);
        libc::_exit(130)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::sync::Arc;

    #[test]
    fn registered_cleanups_run_once_newest_first_and_dropped_ones_never() {
        static R: Registry = Registry::new();
        let order = Arc::new(Mutex::new(Vec::new()));
        let push = |k: u32| -> Cleanup {
            let o = order.clone();
            Box::new(move || o.lock().unwrap().push(k))
        };
        let a = R.add(push(1));
        let b = R.add(push(2));
        let c = R.add(push(3));
        drop(b);
        assert_eq!(R.run(), 2);
        assert_eq!(*order.lock().unwrap(), vec![3, 1]);
        // Taken: a second run finds none of them, and dropping the guards later is harmless.
        let ran = Arc::new(AtomicUsize::new(0));
        let r = ran.clone();
        let d = R.add(Box::new(move || {
            r.fetch_add(1, Ordering::SeqCst);
        }));
        drop(d);
        assert_eq!(R.run(), 0);
        assert_eq!(ran.load(Ordering::SeqCst), 0);
        drop((a, c));
        assert_eq!(*order.lock().unwrap(), vec![3, 1]);
    }

    /// The handler waits for a write in progress, then removes the copy; a
    /// write that comes later waits and never makes the copy again.
    #[test]
    fn a_closed_gate_waits_for_writes_in_progress_and_holds_later_ones() {
        static G: Gate = Gate::new();
        let dir = tempfile::tempdir().unwrap();
        let copy = dir.path().join("copy");
        let write = |name: &'static str, copy: std::path::PathBuf| {
            move || {
                let _w = G.enter(std::time::Duration::from_millis(10));
                std::fs::create_dir_all(&copy).unwrap();
                std::thread::sleep(std::time::Duration::from_millis(300));
                std::fs::write(copy.join(name), b"x").unwrap();
            }
        };
        let early = std::thread::spawn(write("early", copy.clone()));
        std::thread::sleep(std::time::Duration::from_millis(100));
        let handler = {
            let copy = copy.clone();
            std::thread::spawn(move || {
                G.close();
                // The write in progress is done: its file is there.
                assert!(copy.join("early").exists(), "close() waited for the write in progress");
                std::fs::remove_dir_all(&copy).unwrap();
                // The handler's own writes go on.
                let _w = G.enter(std::time::Duration::from_millis(10));
            })
        };
        handler.join().unwrap();
        early.join().unwrap();
        let late = std::thread::spawn(write("late", copy.clone()));
        std::thread::sleep(std::time::Duration::from_millis(500));
        assert!(!late.is_finished() && !copy.exists(), "a write after close() waits and makes nothing");
    }
}
