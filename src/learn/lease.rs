//! One learner per run: a lease in the store.
//!
//! Leases are numbered objects `learn/lease/<NNNNNN>.json`, each taken
//! create-if-absent, so of two learners starting at once only one gets a
//! number. The holder keeps `<NNNNNN>.alive` fresh (a heartbeat every
//! `leaseSeconds / 6`) and marks it released when it stops. A new learner
//! takes the next number only when the newest lease is released, its
//! heartbeat is older than `leaseSeconds`, or its holder ran on this host
//! and its process is gone (a `kill -9` restarted by hand); otherwise it
//! refuses. A holder whose lease was taken over (it stalled for longer
//! than `leaseSeconds`) sees a newer number and stops before it writes
//! anything else.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use parking_lot::Mutex;
use serde::{Deserialize, Serialize};

use crate::store::layout::LearnFiles;
use crate::store::{StoreError, StoreErrorKind};

/// Who holds a lease.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holder {
    /// Host name.
    pub host: String,
    /// Process id.
    pub pid: u32,
    /// When it took the lease (seconds since the epoch).
    pub since_unix: u64,
}

/// A heartbeat.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Heartbeat {
    unix: u64,
    released: bool,
}

/// Why the lease could not be taken or was lost.
#[derive(Debug, thiserror::Error)]
pub enum LeaseError {
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Another learner holds the run.
    #[error(
        "another learner holds this run: {} pid {} (lease {number}), its last heartbeat {age} s ago; \
         it is taken over once that is {lease_seconds} s old, or at once if it runs on this host and has died"
    , .holder.host, .holder.pid)]
    Held {
        /// The holder.
        holder: Holder,
        /// Its lease number.
        number: u64,
        /// Seconds since its heartbeat.
        age: u64,
        /// `leaseSeconds`.
        lease_seconds: u64,
    },
    /// This learner's lease was taken over by another.
    #[error("this learner's lease {mine} was taken over (lease {newer} exists): stopping")]
    Lost {
        /// Our lease number.
        mine: u64,
        /// The newer one.
        newer: u64,
    },
}

fn now_unix() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// This host's short name.
pub fn host_name() -> String {
    let host = nix::unistd::gethostname()
        .ok()
        .and_then(|h| h.into_string().ok())
        .unwrap_or_else(|| "localhost".into());
    host.split('.').next().unwrap_or(&host).to_string()
}

/// Whether process `pid` of this host is gone.
fn is_dead(pid: u32) -> bool {
    let Ok(pid) = i32::try_from(pid) else {
        return false;
    };
    matches!(
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None),
        Err(nix::errno::Errno::ESRCH)
    )
}

/// What [`current`] found about the newest lease.
#[derive(Debug, Clone)]
pub struct LeaseState {
    /// Its number.
    pub number: u64,
    /// Its holder.
    pub holder: Holder,
    /// Seconds since its last heartbeat.
    pub age: u64,
    /// Whether its holder let it go.
    pub released: bool,
}

/// The newest lease of the run, if any.
pub fn current(files: &LearnFiles) -> Result<Option<LeaseState>, StoreError> {
    let Some(&number) = files.leases()?.last() else {
        return Ok(None);
    };
    let holder: Holder = serde_json::from_slice(&files.read_lease(number)?).unwrap_or(Holder {
        host: "?".into(),
        pid: 0,
        since_unix: 0,
    });
    let beat: Option<Heartbeat> = files
        .read_heartbeat(number)?
        .and_then(|b| serde_json::from_slice(&b).ok());
    let last = beat.as_ref().map_or(holder.since_unix, |b| b.unix);
    Ok(Some(LeaseState {
        number,
        age: now_unix().saturating_sub(last),
        released: beat.is_some_and(|b| b.released),
        holder,
    }))
}

/// A held lease; its heartbeat thread runs until [`Lease::release`] or
/// drop.
pub struct Lease {
    files: LearnFiles,
    number: u64,
    lost: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
    /// Held while a heartbeat is written, so that a release is never
    /// overwritten by a beat already on its way.
    beat_lock: Arc<Mutex<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Lease {
    /// Takes the run's lease, or says who holds it.
    pub fn acquire(files: &LearnFiles, lease_seconds: f64) -> Result<Lease, LeaseError> {
        let host = host_name();
        let number = match current(files)? {
            None => 1,
            Some(s) => {
                let dead_here = s.holder.host == host && is_dead(s.holder.pid);
                let mine = s.holder.host == host && s.holder.pid == std::process::id();
                if !(s.released || dead_here || mine || s.age as f64 > lease_seconds) {
                    return Err(LeaseError::Held {
                        holder: s.holder,
                        number: s.number,
                        age: s.age,
                        lease_seconds: lease_seconds as u64,
                    });
                }
                s.number + 1
            }
        };
        let holder = Holder {
            host,
            pid: std::process::id(),
            since_unix: now_unix(),
        };
        let bytes = serde_json::to_vec(&holder).unwrap_or_default();
        match files.create_lease(number, bytes) {
            Ok(_) => {}
            Err(e) if e.kind == StoreErrorKind::AlreadyExists => {
                // Another learner took this number a moment ago.
                let s = current(files)?;
                return Err(LeaseError::Held {
                    holder: s.as_ref().map_or(holder.clone(), |s| s.holder.clone()),
                    number: s.as_ref().map_or(number, |s| s.number),
                    age: 0,
                    lease_seconds: lease_seconds as u64,
                });
            }
            Err(e) => return Err(e.into()),
        }
        write_beat(files, number, false)?;
        let lost = Arc::new(AtomicBool::new(false));
        let stop = Arc::new(AtomicBool::new(false));
        let beat_lock = Arc::new(Mutex::new(()));
        let period = Duration::from_secs_f64((lease_seconds / 6.0).max(0.5));
        let thread = {
            let (files, lost, stop, lock) =
                (files.clone(), lost.clone(), stop.clone(), beat_lock.clone());
            std::thread::Builder::new()
                .name("learn-lease".into())
                .spawn(move || heartbeat_loop(&files, number, period, &lost, &stop, &lock))
                .ok()
        };
        Ok(Lease {
            files: files.clone(),
            number,
            lost,
            stop,
            beat_lock,
            thread,
        })
    }

    /// Its number.
    pub fn number(&self) -> u64 {
        self.number
    }

    /// An error if another learner took the run over; call before each
    /// write that commits a step.
    pub fn check(&self) -> Result<(), LeaseError> {
        if self.lost.load(Ordering::SeqCst) {
            return Err(self.lost_error());
        }
        if let Some(&newest) = self.files.leases()?.last() {
            if newest != self.number {
                self.lost.store(true, Ordering::SeqCst);
                return Err(LeaseError::Lost {
                    mine: self.number,
                    newer: newest,
                });
            }
        }
        Ok(())
    }

    fn lost_error(&self) -> LeaseError {
        let newer = self
            .files
            .leases()
            .ok()
            .and_then(|l| l.last().copied())
            .unwrap_or(self.number + 1);
        LeaseError::Lost {
            mine: self.number,
            newer,
        }
    }

    /// A handle that lets the lease go from another thread (a signal
    /// handler's thread that exits the process).
    pub fn release_handle(&self) -> ReleaseHandle {
        ReleaseHandle {
            files: self.files.clone(),
            number: self.number,
            lost: self.lost.clone(),
            stop: self.stop.clone(),
            beat_lock: self.beat_lock.clone(),
        }
    }

    /// Lets the lease go: the next learner takes over at once.
    pub fn release(mut self) {
        self.stop_thread();
        self.release_handle().release();
    }

    fn stop_thread(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.stop_thread();
    }
}

/// Lets a [`Lease`] go from another thread.
pub struct ReleaseHandle {
    files: LearnFiles,
    number: u64,
    lost: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
    beat_lock: Arc<Mutex<()>>,
}

impl ReleaseHandle {
    /// Stops the heartbeat and marks the lease released (unless it was
    /// taken over).
    pub fn release(&self) {
        let _held = self.beat_lock.lock();
        self.stop.store(true, Ordering::SeqCst);
        if !self.lost.load(Ordering::SeqCst) {
            let _ = write_beat(&self.files, self.number, true);
        }
    }
}

fn write_beat(files: &LearnFiles, number: u64, released: bool) -> Result<(), StoreError> {
    let beat = Heartbeat {
        unix: now_unix(),
        released,
    };
    files.write_heartbeat(number, serde_json::to_vec(&beat).unwrap_or_default())
}

fn heartbeat_loop(
    files: &LearnFiles,
    number: u64,
    period: Duration,
    lost: &AtomicBool,
    stop: &AtomicBool,
    beat_lock: &Mutex<()>,
) {
    while !stop.load(Ordering::SeqCst) {
        std::thread::park_timeout(period);
        if stop.load(Ordering::SeqCst) {
            break;
        }
        match files.leases() {
            Ok(l) if l.last().is_some_and(|&n| n != number) => {
                lost.store(true, Ordering::SeqCst);
                break;
            }
            // A store that does not answer: the next beat tries again (the
            // learner's own writes wait for it the same way).
            Err(_) => continue,
            Ok(_) => {}
        }
        let _held = beat_lock.lock();
        if stop.load(Ordering::SeqCst) {
            break;
        }
        let _ = write_beat(files, number, false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::layout::Run;
    use crate::store::StoreUrl;

    fn files(tag: &str) -> (std::path::PathBuf, LearnFiles) {
        let dir = std::env::temp_dir().join(format!("engine-lease-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let run = Run::open(&StoreUrl::Local(dir.clone())).expect("run");
        (dir, run.learn().expect("learn"))
    }

    #[test]
    fn a_live_lease_refuses_a_second_learner_and_a_released_one_does_not() {
        let (dir, f) = files("live");
        let first = Lease::acquire(&f, 300.0).expect("first");
        assert_eq!(first.number(), 1);
        // The same process counts as a new learner only after release; a
        // holder with another pid on this host that is alive refuses.
        let holder = Holder {
            host: host_name(),
            pid: 1, // init: alive
            since_unix: now_unix(),
        };
        f.create_lease(2, serde_json::to_vec(&holder).expect("json"))
            .expect("fake lease");
        write_beat(&f, 2, false).expect("beat");
        let e = Lease::acquire(&f, 300.0).err().expect("held");
        assert!(matches!(e, LeaseError::Held { number: 2, .. }), "{e}");
        assert!(e.to_string().contains("pid 1"), "{e}");
        // The first learner sees it lost the run.
        assert!(matches!(
            first.check(),
            Err(LeaseError::Lost { mine: 1, newer: 2 })
        ));
        // Released: taken at once.
        write_beat(&f, 2, true).expect("release");
        let third = Lease::acquire(&f, 300.0).expect("after release");
        assert_eq!(third.number(), 3);
        third.check().expect("holds");
        third.release();
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_dead_holder_on_this_host_or_a_stale_heartbeat_is_taken_over() {
        let (dir, f) = files("dead");
        let dead = Holder {
            host: host_name(),
            pid: 0x3fff_fff0, // no such process
            since_unix: now_unix(),
        };
        f.create_lease(1, serde_json::to_vec(&dead).expect("json"))
            .expect("lease");
        write_beat(&f, 1, false).expect("beat");
        let l = Lease::acquire(&f, 300.0).expect("dead holder");
        assert_eq!(l.number(), 2);
        drop(l);
        // Another host's holder with a fresh heartbeat refuses; with a
        // stale one (older than leaseSeconds) it is taken over.
        let other = Holder {
            host: "elsewhere".into(),
            pid: 1,
            since_unix: now_unix(),
        };
        f.create_lease(3, serde_json::to_vec(&other).expect("json"))
            .expect("lease");
        let beat = Heartbeat {
            unix: now_unix() - 100,
            released: false,
        };
        f.write_heartbeat(3, serde_json::to_vec(&beat).expect("json"))
            .expect("beat");
        assert!(Lease::acquire(&f, 300.0).is_err());
        let l = Lease::acquire(&f, 60.0).expect("stale");
        assert_eq!(l.number(), 4);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
