//! The storage layer of run directories given as URLs (`s3://bucket/prefix`,
//! `gs://bucket/prefix`, `az://container/prefix`, `file:///abs/path`): a
//! synchronous facade over the `object_store` crate (a small tokio runtime
//! drives its async calls), so that the rest of the program stays
//! synchronous.
//!
//! * Credentials and endpoints come from the environment only, as the crate's
//!   `from_env` builders read them: `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
//!   `AWS_REGION`, `AWS_ENDPOINT_URL`, `AWS_ALLOW_HTTP`, ... for S3;
//!   `GOOGLE_SERVICE_ACCOUNT`, ... for GCS; `AZURE_STORAGE_ACCOUNT_NAME`, ... for
//!   Azure. Never from the run config.
//! * Objects are written whole (a put is atomic on every back end: readers
//!   never see a partial object). Immutable objects are written with
//!   create-only puts ([`RunStore::put_create`]); mutable ones with
//!   conditional updates on the version read ([`RunStore::put_update`]).
//!   [`RunStore::conditional_updates`] tells whether the store has them (probed
//!   when the store is opened; the local file system of `file://` has not).
//! * [`Lease`]: a claim on a role (the trainer, a worker index) held by one
//!   process at a time, renewed by a heartbeat.
//!
//! Plain paths (the default `--run-dir`) do not come here: they are the
//! local run directory, read and written as before.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{anyhow, bail, Context, Result};
use futures::TryStreamExt;
use object_store::path::Path as ObjPath;
use object_store::prefix::PrefixStore;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload, UpdateVersion};

/// True when `--run-dir` names a URL (`scheme://...`) rather than a local path.
pub fn is_url(run_dir: &Path) -> bool {
    run_dir.to_str().is_some_and(|s| s.split_once("://").is_some_and(|(scheme, _)| !scheme.is_empty()))
}

/// The URL schemes [`RunStore::open`] opens, and two it does not but that a
/// user may write (`http`, `https`): a value starting with one of them and a
/// colon is taken for a URL, never for a relative path.
const URL_SCHEMES: [&str; 9] = ["file", "s3", "s3a", "gs", "az", "azure", "abfs", "http", "https"];

/// The `--run-dir` value parser of `pipeline` and `selfplay`: a path, or a URL
/// (`scheme://...`, opened by [`RunStore::open`]).
///
/// # Errors
/// An empty value, or a value that starts like a URL of a known scheme but
/// lacks the `//` (`file:runs/x`, `s3:bucket/run`), which would otherwise be
/// taken as a relative path named `file:runs/x`.
pub fn parse_run_dir(s: &str) -> std::result::Result<std::path::PathBuf, String> {
    if s.trim().is_empty() {
        return Err("the run directory is empty".into());
    }
    if let Some((scheme, rest)) = s.split_once(':') {
        let lower = scheme.to_ascii_lowercase();
        if URL_SCHEMES.contains(&lower.as_str()) && !rest.starts_with("//") {
            return Err(format!(
                "{s:?} starts like a URL of scheme {lower}:// but has no `//` after `{scheme}:`: write the URL \
                 in full ({lower}://..., file:///abs/path for a local directory), or a path without `{scheme}:`"
            ));
        }
    }
    Ok(std::path::PathBuf::from(s))
}

/// The `--run-dir` value parser of the commands that read a local run
/// directory only (`train`, `evaluate`, `report`).
///
/// # Errors
/// Those of [`parse_run_dir`], and any URL: these commands do not read object
/// stores (copy the run down first, `docs/distributed.md`).
pub fn parse_local_run_dir(s: &str) -> std::result::Result<std::path::PathBuf, String> {
    let p = parse_run_dir(s)?;
    if is_url(&p) {
        return Err(format!(
            "{s} is a URL: this command reads a local run directory only; copy the run down first \
             (e.g. `aws s3 sync s3://bucket/run runs/copy`, docs/distributed.md, \"Working copies\")"
        ));
    }
    Ok(p)
}

/// The local directory that `run_dir` names: the path itself, or the path of
/// a `file:///abs/path` URL; `None` for a remote store (`s3://`, ...). The
/// claims of [`crate::spool::WorkerLock`] are taken there, so that a run named
/// both ways (`/r` and `file:///r`) has one claim per role.
pub fn local_dir(run_dir: &Path) -> Option<std::path::PathBuf> {
    if !is_url(run_dir) {
        return Some(run_dir.to_path_buf());
    }
    let s = run_dir.to_str()?;
    let (scheme, rest) = s.split_once("://")?;
    (scheme.eq_ignore_ascii_case("file") && rest.starts_with('/'))
        .then(|| std::path::PathBuf::from(normalize_abs(rest)))
}

/// The version of an object as the store reports it (entity tag and/or
/// version id), kept to make a later update conditional on it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Version {
    /// Entity tag.
    pub e_tag: Option<String>,
    /// Version id (stores with object versioning).
    pub version: Option<String>,
}

impl From<&Version> for UpdateVersion {
    fn from(v: &Version) -> UpdateVersion {
        UpdateVersion { e_tag: v.e_tag.clone(), version: v.version.clone() }
    }
}

/// One listed object: its name relative to the run's root and its size in bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listed {
    /// Name relative to the run root, `/`-separated (`shards/gen0001-w0-000000.npz`).
    pub name: String,
    /// Size in bytes.
    pub size: u64,
    /// The version the listing reports.
    pub version: Version,
}

/// What a conditional put did.
#[derive(Debug, PartialEq, Eq)]
pub enum PutOutcome {
    /// Written; the new version.
    Written(Version),
    /// Not written: [`RunStore::put_create`] found the object there, or
    /// [`RunStore::put_update`] found a version other than the one given.
    Conflict,
}

/// A run directory on an object store: the store, rooted at the run's prefix.
pub struct RunStore {
    url: String,
    store: Arc<dyn ObjectStore>,
    rt: tokio::runtime::Runtime,
    conditional_updates: bool,
    /// The cached listing: when it was taken and what it held.
    listing: Mutex<Option<(Instant, Vec<Listed>)>>,
    /// How long a listing is reused by [`RunStore::list_cached`].
    list_interval: Duration,
}

impl std::fmt::Debug for RunStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunStore").field("url", &self.url).finish()
    }
}

/// The part of the URL after `scheme://`, split into the bucket (or
/// container, or nothing for `file://`) and the prefix.
/// The scheme in lower case (`S3://` is `s3://`); a `file://` URL's path
/// normalised lexically (`.` and `..` resolved, repeated `/` merged), so that
/// nothing is created on the way to it.
fn split_url(url: &str) -> Result<(String, &str, String)> {
    let (scheme, rest) = url.split_once("://").with_context(|| format!("{url:?} is not a URL"))?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme == "file" {
        if !rest.starts_with('/') {
            bail!("{url:?}: a file:// URL needs an absolute path (file:///abs/path)");
        }
        return Ok((scheme, "", normalize_abs(rest)));
    }
    let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
    if bucket.is_empty() {
        bail!("{url:?} names no bucket (expected {scheme}://bucket/prefix)");
    }
    Ok((scheme, bucket, prefix.trim_matches('/').to_string()))
}

/// An absolute `/`-path with `.`, `..` and empty components resolved lexically.
fn normalize_abs(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for c in path.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            c => parts.push(c),
        }
    }
    format!("/{}", parts.join("/"))
}

/// Checks the S3 endpoint variables before `object_store` uses them (a
/// malformed one makes it panic when it signs a request).
///
/// # Errors
/// `AWS_ENDPOINT_URL` or `AWS_ENDPOINT` set to something other than an
/// `http://` or `https://` URL with a host (named, with the value).
fn check_s3_endpoint(settings: &[(&str, &str)]) -> Result<()> {
    let mut given: Vec<(String, String)> = ["AWS_ENDPOINT_URL", "AWS_ENDPOINT"]
        .iter()
        .filter_map(|k| Some((k.to_string(), std::env::var(k).ok()?)))
        .collect();
    given.extend(
        settings
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case("aws_endpoint"))
            .map(|(k, v)| (k.to_string(), v.to_string())),
    );
    for (k, v) in given {
        let ok = (v.starts_with("http://") || v.starts_with("https://"))
            && v.trim() == v
            && url::Url::parse(&v).is_ok_and(|u| u.host_str().is_some_and(|h| !h.is_empty()));
        if !ok {
            bail!("{k}={v:?} is not an endpoint URL: expected http://host[:port] or https://host[:port]");
        }
    }
    Ok(())
}

fn now_unix() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

impl RunStore {
    /// Opens the run at `url`, with listings reused for `list_interval`
    /// ([`RunStore::list_cached`]). Probes whether the store has conditional
    /// updates by writing, updating and deleting a probe object
    /// (`.probe-<pid>-<time>`).
    ///
    /// # Errors
    /// An unknown scheme, a URL without bucket, a store that cannot be built
    /// from the environment (e.g. missing region or credentials), or one that
    /// cannot be reached or written (naming the URL).
    pub fn open(url: &str, list_interval: Duration) -> Result<RunStore> {
        Self::open_with(url, list_interval, &[])
    }

    /// [`RunStore::open`] with S3 settings on top of the environment's
    /// (`("aws_endpoint", "http://...")`, as the `AWS_*` variables in lower case).
    ///
    /// # Errors
    /// Those of [`RunStore::open`], or an unknown S3 setting.
    pub fn open_with(url: &str, list_interval: Duration, s3: &[(&str, &str)]) -> Result<RunStore> {
        let (scheme, bucket, prefix) = split_url(url)?;
        let prefix = prefix.as_str();
        let retry =
            object_store::RetryConfig { max_retries: 4, retry_timeout: Duration::from_secs(30), ..Default::default() };
        let inner: Arc<dyn ObjectStore> = match scheme.as_str() {
            "file" => {
                std::fs::create_dir_all(prefix).with_context(|| format!("creating {prefix}"))?;
                Arc::new(
                    object_store::local::LocalFileSystem::new_with_prefix(prefix)
                        .with_context(|| format!("opening {url}"))?,
                )
            }
            "s3" | "s3a" => {
                check_s3_endpoint(s3)?;
                let mut b = object_store::aws::AmazonS3Builder::from_env();
                for (k, v) in s3 {
                    b = b.with_config(k.parse().with_context(|| format!("unknown S3 setting {k}"))?, *v);
                }
                Arc::new(b.with_url(format!("s3://{bucket}")).with_retry(retry).build().with_context(|| {
                    format!("{url}: the S3 settings in the environment (AWS_*) are incomplete or invalid")
                })?)
            }
            "gs" => Arc::new(
                object_store::gcp::GoogleCloudStorageBuilder::from_env()
                    .with_url(format!("gs://{bucket}"))
                    .with_retry(retry)
                    .build()
                    .with_context(|| {
                        format!("{url}: the GCS settings in the environment (GOOGLE_*) are incomplete or invalid")
                    })?,
            ),
            "az" | "azure" | "abfs" => Arc::new(
                object_store::azure::MicrosoftAzureBuilder::from_env()
                    .with_url(format!("{scheme}://{bucket}"))
                    .with_retry(retry)
                    .build()
                    .with_context(|| {
                        format!("{url}: the Azure settings in the environment (AZURE_*) are incomplete or invalid")
                    })?,
            ),
            other => bail!("--run-dir {url}: unknown scheme {other}:// (use a path, file://, s3://, gs:// or az://)"),
        };
        let store: Arc<dyn ObjectStore> = if scheme == "file" || prefix.is_empty() {
            inner
        } else {
            Arc::new(PrefixStore::new(inner, ObjPath::from(prefix)))
        };
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("object-store")
            .enable_all()
            .build()
            .context("starting the storage runtime")?;
        let mut s = RunStore {
            url: url.trim_end_matches('/').to_string(),
            store,
            rt,
            conditional_updates: false,
            listing: Mutex::new(None),
            list_interval,
        };
        s.conditional_updates = s.probe().map_err(|e| {
            // Without keys in the environment the S3 client asks the instance metadata service.
            let text = crate::errtext::one_line(&e);
            if scheme == "s3" && std::env::var_os("AWS_ACCESS_KEY_ID").is_none() && text.contains("169.254.169.254") {
                e.context(format!(
                    "no S3 credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set, and no instance \
                     metadata service answered at 169.254.169.254 (cannot use the run directory {url})"
                ))
            } else {
                e.context(format!("cannot use the run directory {url}"))
            }
        })?;
        Ok(s)
    }

    /// Writes, updates and deletes a probe object; true when the update
    /// conditional on the version written is supported.
    fn probe(&self) -> Result<bool> {
        let name = format!(".probe-{}-{}", std::process::id(), now_unix());
        let v = match self.put_create(&name, b"probe".to_vec())? {
            PutOutcome::Written(v) => v,
            PutOutcome::Conflict => bail!("the probe object {name} exists already"),
        };
        let path = ObjPath::from(name.as_str());
        let opts = PutOptions { mode: PutMode::Update((&v).into()), ..Default::default() };
        let r = self.rt.block_on(self.store.put_opts(&path, PutPayload::from(b"probe2".to_vec()), opts));
        let supported = match r {
            Ok(_) => true,
            Err(object_store::Error::NotImplemented { .. }) | Err(object_store::Error::NotSupported { .. }) => false,
            Err(e) => return Err(anyhow!(e)).context("probing conditional updates"),
        };
        self.delete(&name)?;
        Ok(supported)
    }

    /// The URL the run was opened with (without a trailing `/`).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Whether updates conditional on a version are supported (not on
    /// `file://`: the local file system has create-only puts but no
    /// compare-and-swap).
    pub fn conditional_updates(&self) -> bool {
        self.conditional_updates
    }

    fn path(name: &str) -> ObjPath {
        ObjPath::from(name)
    }

    /// The object `name` and its version, or `None` when there is none.
    ///
    /// # Errors
    /// Any store error but "not found", naming the object.
    pub fn get(&self, name: &str) -> Result<Option<(Vec<u8>, Version)>> {
        let p = Self::path(name);
        let r = self.rt.block_on(async {
            let g = self.store.get(&p).await?;
            let v = Version { e_tag: g.meta.e_tag.clone(), version: g.meta.version.clone() };
            let b = g.bytes().await?;
            Ok::<_, object_store::Error>((b.to_vec(), v))
        });
        match r {
            Ok(x) => Ok(Some(x)),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(anyhow!(e)).with_context(|| format!("reading {}/{name}", self.url)),
        }
    }

    fn put_mode(&self, name: &str, bytes: Vec<u8>, mode: PutMode) -> Result<PutOutcome> {
        let p = Self::path(name);
        let mode_name = match mode {
            PutMode::Create => "create",
            PutMode::Update(_) => "update",
            _ => "overwrite",
        };
        let opts = PutOptions { mode, ..Default::default() };
        match self.rt.block_on(self.store.put_opts(&p, PutPayload::from(bytes), opts)) {
            Ok(r) => {
                self.invalidate();
                Ok(PutOutcome::Written(Version { e_tag: r.e_tag, version: r.version }))
            }
            Err(object_store::Error::AlreadyExists { .. }) | Err(object_store::Error::Precondition { .. }) => {
                Ok(PutOutcome::Conflict)
            }
            Err(e @ object_store::Error::NotImplemented { .. }) if matches!(mode_name, "create") => Err(anyhow!(e))
                .with_context(|| {
                    format!(
                        "{}: the store has no create-only puts, which a run needs so that no object is \
                         overwritten (for S3, leave AWS_CONDITIONAL_PUT unset or set it to etag)",
                        self.url
                    )
                }),
            Err(e) => Err(anyhow!(e)).with_context(|| format!("writing {}/{name}", self.url)),
        }
    }

    /// Writes `name` only if it does not exist.
    ///
    /// # Errors
    /// Store errors, naming the object.
    pub fn put_create(&self, name: &str, bytes: Vec<u8>) -> Result<PutOutcome> {
        self.put_mode(name, bytes, PutMode::Create)
    }

    /// Replaces `name` only if its version is still `version`. On a store
    /// without conditional updates, an unconditional overwrite.
    ///
    /// # Errors
    /// Store errors, naming the object.
    pub fn put_update(&self, name: &str, bytes: Vec<u8>, version: &Version) -> Result<PutOutcome> {
        if !self.conditional_updates {
            return self.put_mode(name, bytes, PutMode::Overwrite);
        }
        self.put_mode(name, bytes, PutMode::Update(version.into()))
    }

    /// Deletes `name` (no error when it does not exist).
    ///
    /// # Errors
    /// Store errors, naming the object.
    pub fn delete(&self, name: &str) -> Result<()> {
        let p = Self::path(name);
        self.invalidate();
        match self.rt.block_on(self.store.delete(&p)) {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(anyhow!(e)).with_context(|| format!("deleting {}/{name}", self.url)),
        }
    }

    /// Every object of the run, by name, listed now (and kept as the cached listing).
    ///
    /// # Errors
    /// Store errors (an unreachable endpoint, missing credentials), naming the URL.
    pub fn list(&self) -> Result<Vec<Listed>> {
        let v: Vec<Listed> = self
            .rt
            .block_on(async {
                let metas: Vec<object_store::ObjectMeta> = self.store.list(None).try_collect().await?;
                Ok::<_, object_store::Error>(metas)
            })
            .with_context(|| format!("listing {}", self.url))?
            .into_iter()
            .map(|m| Listed {
                name: m.location.to_string(),
                size: m.size,
                version: Version { e_tag: m.e_tag, version: m.version },
            })
            .collect();
        *self.listing.lock().unwrap_or_else(|e| e.into_inner()) = Some((Instant::now(), v.clone()));
        Ok(v)
    }

    /// The listing of [`RunStore::list`], reused while it is younger than the
    /// interval given to [`RunStore::open`] (our own writes drop it).
    ///
    /// # Errors
    /// Those of [`RunStore::list`].
    pub fn list_cached(&self) -> Result<Vec<Listed>> {
        if let Some((t, v)) = self.listing.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            if t.elapsed() < self.list_interval {
                return Ok(v.clone());
            }
        }
        self.list()
    }

    /// Drops the cached listing.
    fn invalidate(&self) {
        *self.listing.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }

    /// The listing as a map from name to entry.
    ///
    /// # Errors
    /// Those of [`RunStore::list_cached`].
    pub fn index(&self) -> Result<BTreeMap<String, Listed>> {
        Ok(self.list_cached()?.into_iter().map(|l| (l.name.clone(), l)).collect())
    }
}

/// The content of a lease object.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct LeaseBody {
    holder: String,
    host: String,
    pid: u32,
    renewed_unix: u64,
    /// Renewal time in milliseconds since the epoch (0 in leases written before it was kept).
    #[serde(default)]
    renewed_ms: u64,
    /// The holder's `--lease-seconds` in milliseconds: how long the lease stays
    /// fresh without renewal, judged by the holder's setting, not the
    /// newcomer's (0 in leases written before it was kept).
    #[serde(default)]
    stale_ms: u64,
}

/// This host's name (lease holders, working-copy names).
pub(crate) fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown-host".into())
}

/// A claim on a role of a run (`trainer.lease`, `workers/w<id>.lease`), held
/// by one process at a time: created with a create-only put; renewed every
/// quarter of `stale` by a heartbeat thread (a conditional update on the
/// version written before, so a process that lost the claim finds out); taken
/// over when it is older than `stale` or its holder is a process of this host
/// that no longer runs (a worker restarted after SIGKILL). Released on drop
/// and when the process is interrupted ([`crate::interrupt`]).
pub struct Lease {
    name: String,
    role: String,
    store: Arc<RunStore>,
    version: Arc<Mutex<Version>>,
    lost: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
    heartbeat: Option<std::thread::JoinHandle<()>>,
    _on_interrupt: crate::interrupt::Registered,
}

impl Lease {
    /// Claims `name` for `role` (words for messages: `the trainer`, `worker i3`).
    ///
    /// # Errors
    /// A live holder (named with its host, pid and age), a claim lost to a
    /// process that claimed it at the same moment, or store errors.
    pub fn acquire(store: Arc<RunStore>, name: &str, role: &str, stale: Duration) -> Result<Lease> {
        let me = LeaseBody {
            holder: format!("{}:{}:{}", host_name(), std::process::id(), now_unix()),
            host: host_name(),
            pid: std::process::id(),
            renewed_unix: now_unix(),
            renewed_ms: now_ms(),
            stale_ms: stale.as_millis() as u64,
        };
        let body = serde_json::to_vec(&me)?;
        let outcome = match store.get(name)? {
            None => store.put_create(name, body)?,
            Some((bytes, v)) => {
                let old: Option<LeaseBody> = serde_json::from_slice(&bytes).ok();
                // Milliseconds since the holder renewed, judged fresh by the holder's own limit
                // (a newcomer with a shorter --lease-seconds must not evict a live holder).
                let age_ms = old.as_ref().map_or(u64::MAX, |o| {
                    let renewed = if o.renewed_ms > 0 { o.renewed_ms } else { o.renewed_unix.saturating_mul(1000) };
                    now_ms().saturating_sub(renewed)
                });
                let limit_ms = old.as_ref().map(|o| o.stale_ms).filter(|&m| m > 0).unwrap_or(stale.as_millis() as u64);
                let age = age_ms / 1000;
                // A holder on this host that no longer runs, or whose pid is ours (an earlier
                // run of this container: two live processes never share a pid), is gone.
                let dead_here = old.as_ref().is_some_and(|o| {
                    o.host == me.host && (o.pid == me.pid || !Path::new(&format!("/proc/{}", o.pid)).exists())
                });
                if age_ms < limit_ms && !dead_here {
                    let o = old.expect("a fresh lease parsed");
                    bail!(
                        "{role} of {} is already running (host {}, pid {}, lease {}/{name} renewed {age} s ago): \
                         stop it first, or wait {} s after it died",
                        store.url(),
                        o.host,
                        o.pid,
                        store.url(),
                        (limit_ms.saturating_sub(age_ms)).div_ceil(1000)
                    );
                }
                if old.is_none() {
                    // A claim that does not read (damaged) is taken over like a stale one; a live
                    // holder finds its claim lost at its next renewal and stops.
                    eprintln!(
                        "warning: {}/{name} does not read as a claim (damaged); {role} takes it over",
                        store.url()
                    );
                }
                if let Some(o) = &old {
                    let why = if dead_here { "no longer runs".to_string() } else { format!("not renewed for {age} s") };
                    eprintln!(
                        "storage: {role} takes over {}/{name} from host {}, pid {} ({why})",
                        store.url(),
                        o.host,
                        o.pid
                    );
                }
                if store.conditional_updates() {
                    store.put_update(name, body, &v)?
                } else {
                    // Without compare-and-swap: delete, then create (only one creator wins).
                    store.delete(name)?;
                    store.put_create(name, body)?
                }
            }
        };
        let version = match outcome {
            PutOutcome::Written(v) => v,
            PutOutcome::Conflict => bail!(
                "{role} of {}: another process claimed {name} at the same moment (it lost the conditional \
                 update to it); only one may run",
                store.url()
            ),
        };
        let version = Arc::new(Mutex::new(version));
        let lost = Arc::new(AtomicBool::new(false));
        let stop = Arc::new(AtomicBool::new(false));
        let heartbeat = {
            let (store, version, lost, stop, name, role) =
                (store.clone(), version.clone(), lost.clone(), stop.clone(), name.to_string(), role.to_string());
            let period = (stale / 4).max(Duration::from_millis(200));
            std::thread::Builder::new().name("lease".into()).spawn(move || {
                let mut next = Instant::now() + period;
                while !stop.load(Ordering::SeqCst) {
                    std::thread::sleep(Duration::from_millis(100));
                    if Instant::now() < next {
                        continue;
                    }
                    next = Instant::now() + period;
                    let body = LeaseBody { renewed_unix: now_unix(), renewed_ms: now_ms(), ..me.clone() };
                    let Ok(bytes) = serde_json::to_vec(&body) else { continue };
                    let v = version.lock().unwrap_or_else(|e| e.into_inner()).clone();
                    match store.put_update(&name, bytes, &v) {
                        Ok(PutOutcome::Written(nv)) => *version.lock().unwrap_or_else(|e| e.into_inner()) = nv,
                        Ok(PutOutcome::Conflict) => {
                            // Said once, by the process's own error when it next checks (`Lease::check`).
                            lost.store(true, Ordering::SeqCst);
                            return;
                        }
                        Err(e) => {
                            eprintln!(
                                "warning: {role}: renewing {}/{name}: {}",
                                store.url(),
                                crate::errtext::one_line(&e)
                            )
                        }
                    }
                }
            })?
        };
        // Interrupted (Ctrl-C, SIGTERM: a deleted Kubernetes pod), the process releases its claim so
        // that its successor need not wait `stale`; bounded, so an unreachable store cannot hold it up.
        let on_interrupt = {
            let (store, name, lost) = (store.clone(), name.to_string(), lost.clone());
            crate::interrupt::on_interrupt(move || {
                if lost.load(Ordering::SeqCst) {
                    return;
                }
                let (tx, rx) = std::sync::mpsc::channel();
                std::thread::spawn(move || {
                    let _ = store.delete(&name);
                    let _ = tx.send(());
                });
                let _ = rx.recv_timeout(Duration::from_secs(5));
            })
        };
        Ok(Lease {
            name: name.to_string(),
            role: role.to_string(),
            store,
            version,
            lost,
            stop,
            heartbeat: Some(heartbeat),
            _on_interrupt: on_interrupt,
        })
    }

    /// Fails when another process took the lease over.
    ///
    /// # Errors
    /// The lease was lost (naming it).
    pub fn check(&self) -> Result<()> {
        if self.lost.load(Ordering::SeqCst) {
            bail!(
                "{} lost its lease {}/{} to another process (a second one with the same role started, or this one \
                 stalled longer than --lease-seconds): stopping",
                self.role,
                self.store.url(),
                self.name
            );
        }
        Ok(())
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(h) = self.heartbeat.take() {
            let _ = h.join();
        }
        if !self.lost.load(Ordering::SeqCst) {
            // Release only what is still ours.
            let v = self.version.lock().unwrap_or_else(|e| e.into_inner()).clone();
            let mine = self.store.get(&self.name).ok().flatten().is_some_and(|(_, cur)| cur == v);
            if mine {
                let _ = self.store.delete(&self.name);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_paths() {
        assert!(is_url(Path::new("s3://b/p")));
        assert!(is_url(Path::new("file:///tmp/x")));
        assert!(!is_url(Path::new("/tmp/x")));
        assert!(!is_url(Path::new("runs/a")));
        assert_eq!(split_url("s3://bucket/a/b/").unwrap(), ("s3".into(), "bucket", "a/b".into()));
        assert_eq!(split_url("S3://bucket/a").unwrap(), ("s3".into(), "bucket", "a".into()));
        assert_eq!(split_url("file:///tmp/r").unwrap(), ("file".into(), "", "/tmp/r".into()));
        assert_eq!(split_url("FILE:///tmp//x/./../r/").unwrap(), ("file".into(), "", "/tmp/r".into()));
        assert_eq!(local_dir(Path::new("file:///tmp/x/../r")), Some("/tmp/r".into()));
        for bad in ["127.0.0.1:5123", "http://127.0.0.1:5123 ", "http://127.0.0.1:notaport", "", "http://"] {
            let e = check_s3_endpoint(&[("aws_endpoint", bad)]).unwrap_err().to_string();
            assert!(e.contains("not an endpoint URL") && e.contains(&format!("{bad:?}")), "{e}");
        }
        check_s3_endpoint(&[("aws_endpoint", "http://127.0.0.1:5123")]).unwrap();
        check_s3_endpoint(&[("aws_endpoint", "https://s3.example.com")]).unwrap();
        assert!(split_url("s3:///x").unwrap_err().to_string().contains("names no bucket"));
        assert!(split_url("file://rel").unwrap_err().to_string().contains("absolute path"));
    }

    #[test]
    fn run_dir_values() {
        for ok in ["runs/a", "/tmp/x", "s3://b/p", "file:///tmp/x", "a:b", "runs/file:x"] {
            assert_eq!(parse_run_dir(ok).unwrap(), std::path::PathBuf::from(ok), "{ok}");
        }
        for bad in ["file:x/y", "FILE:/abs", "s3:bucket/run", "gs:/b", "https:host/x"] {
            let e = parse_run_dir(bad).unwrap_err();
            assert!(e.contains("has no `//`") && e.contains(bad), "{bad}: {e}");
        }
        assert!(parse_run_dir("  ").unwrap_err().contains("empty"));
        assert!(parse_local_run_dir("runs/a").is_ok());
        let e = parse_local_run_dir("s3://b/run").unwrap_err();
        assert!(e.contains("local run directory only") && e.contains("s3://b/run"), "{e}");
        assert!(parse_local_run_dir("file:x").unwrap_err().contains("has no `//`"));
        assert_eq!(local_dir(Path::new("runs/a")), Some("runs/a".into()));
        assert_eq!(local_dir(Path::new("file:///tmp/r")), Some("/tmp/r".into()));
        assert_eq!(local_dir(Path::new("s3://b/r")), None);
        let e = RunStore::open("ftp://x/y", Duration::ZERO).unwrap_err().to_string();
        assert!(e.contains("unknown scheme ftp://"), "{e}");
    }

    #[test]
    fn file_store_puts_lists_and_leases() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("file://{}", dir.path().join("run").display());
        let s = Arc::new(RunStore::open(&url, Duration::from_secs(60)).unwrap());
        assert!(!s.conditional_updates(), "the local file system has no compare-and-swap");
        assert!(matches!(s.put_create("a/b.txt", b"1".to_vec()).unwrap(), PutOutcome::Written(_)));
        assert_eq!(s.put_create("a/b.txt", b"2".to_vec()).unwrap(), PutOutcome::Conflict);
        let (b, _) = s.get("a/b.txt").unwrap().unwrap();
        assert_eq!(b, b"1");
        assert!(s.get("missing").unwrap().is_none());
        let names: Vec<String> = s.list().unwrap().into_iter().map(|l| l.name).collect();
        assert_eq!(names, vec!["a/b.txt"], "the probe object is gone");
        let lease = Lease::acquire(s.clone(), "trainer.lease", "the trainer", Duration::from_secs(60)).unwrap();
        lease.check().unwrap();
        drop(lease);
        assert!(s.get("trainer.lease").unwrap().is_none(), "released on drop");
        // A fresh claim of a live process (pid 1 runs) is refused; a stale one is taken over.
        let other = |age: u64| LeaseBody {
            holder: "h".into(),
            host: host_name(),
            pid: 1,
            renewed_unix: now_unix() - age,
            renewed_ms: 0,
            stale_ms: 0,
        };
        s.put_create("trainer.lease", serde_json::to_vec(&other(0)).unwrap()).unwrap();
        let e = Lease::acquire(s.clone(), "trainer.lease", "the trainer", Duration::from_secs(60))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("the trainer of") && e.contains("already running") && e.contains("pid 1"), "{e}");
        s.delete("trainer.lease").unwrap();
        s.put_create("trainer.lease", serde_json::to_vec(&other(120)).unwrap()).unwrap();
        let lease = Lease::acquire(s.clone(), "trainer.lease", "the trainer", Duration::from_secs(60)).unwrap();
        drop(lease);
        // A claim by a process of this host that no longer runs is taken over at once.
        let dead = LeaseBody { pid: 4_194_303, ..other(0) };
        s.put_create("trainer.lease", serde_json::to_vec(&dead).unwrap()).unwrap();
        let lease = Lease::acquire(s.clone(), "trainer.lease", "the trainer", Duration::from_secs(60)).unwrap();
        drop(lease);
        // Freshness is judged by the holder's limit in milliseconds: a newcomer with a shorter
        // --lease-seconds (10 s, or under a second) does not evict a holder renewed 3 s ago with 60 s.
        let live = LeaseBody { renewed_ms: now_ms() - 3_000, stale_ms: 60_000, ..other(3) };
        s.put_create("trainer.lease", serde_json::to_vec(&live).unwrap()).unwrap();
        for short in [Duration::from_secs(10), Duration::from_millis(500)] {
            let e = Lease::acquire(s.clone(), "trainer.lease", "the trainer", short).err().unwrap().to_string();
            assert!(e.contains("already running") && e.contains("renewed 3 s ago"), "{e}");
        }
        // ... and taken over once it is older than the holder's limit.
        s.delete("trainer.lease").unwrap();
        let old = LeaseBody { renewed_ms: now_ms() - 61_000, stale_ms: 60_000, ..other(61) };
        s.put_create("trainer.lease", serde_json::to_vec(&old).unwrap()).unwrap();
        assert!(Lease::acquire(s.clone(), "trainer.lease", "the trainer", Duration::from_secs(120)).is_ok());
        // A damaged claim (bad UTF-8, cut JSON) is taken over like a stale one.
        for junk in [&b"\xff\xfe{\"holder"[..], &b"{\"holder\": \"h\", \"pid\": "[..]] {
            let _ = s.delete("trainer.lease");
            s.put_create("trainer.lease", junk.to_vec()).unwrap();
            let lease = Lease::acquire(s.clone(), "trainer.lease", "the trainer", Duration::from_secs(60)).unwrap();
            lease.check().unwrap();
            drop(lease);
        }
    }
}
