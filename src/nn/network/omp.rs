//! Runs Rust work on libtorch's own OpenMP thread team.
//!
//! libtorch parallelises its CPU ops with GNU OpenMP (`libgomp`, loaded with
//! it). Our Winograd transforms run between libtorch's matrix products; on a
//! second pool (rayon, scoped threads) they would fight libtorch's OpenMP
//! workers, which spin for a while after each op, for the same cores. So we
//! look up libgomp's entry point `GOMP_parallel` in the already loaded
//! libraries and run the transforms on the same team, with the same thread
//! count. Where the symbol is absent (another OpenMP runtime, a static
//! build, a platform other than Linux) the work runs on the calling thread.

use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::sync::OnceLock;

type Body = unsafe extern "C" fn(*mut c_void);

/// The libgomp functions we call.
struct Gomp {
    /// `GOMP_parallel(fn, data, num_threads, flags)`: runs `fn(data)` on a
    /// team of `num_threads` (the caller included) and waits for all.
    parallel: unsafe extern "C" fn(Body, *mut c_void, c_uint, c_uint),
    /// `omp_get_thread_num()`, inside a parallel region.
    thread_num: unsafe extern "C" fn() -> c_int,
    /// `omp_get_num_threads()`, inside a parallel region.
    num_threads: unsafe extern "C" fn() -> c_int,
}

#[cfg(target_os = "linux")]
extern "C" {
    fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
}

/// glibc's `RTLD_DEFAULT`: search the global scope of loaded libraries.
#[cfg(target_os = "linux")]
const RTLD_DEFAULT: *mut c_void = std::ptr::null_mut();

/// The address of the loaded function `name`, if any.
#[cfg(target_os = "linux")]
fn find(name: &CStr) -> Option<*mut c_void> {
    // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name only reads
    // the loader's tables.
    let p = unsafe { dlsym(RTLD_DEFAULT, name.as_ptr()) };
    (!p.is_null()).then_some(p)
}

#[cfg(not(target_os = "linux"))]
fn find(_name: &CStr) -> Option<*mut c_void> {
    None
}

fn gomp() -> Option<&'static Gomp> {
    static GOMP: OnceLock<Option<Gomp>> = OnceLock::new();
    GOMP.get_or_init(|| {
        let parallel = find(c"GOMP_parallel")?;
        let thread_num = find(c"omp_get_thread_num")?;
        let num_threads = find(c"omp_get_num_threads")?;
        // SAFETY: these are libgomp's exported C functions with exactly
        // these signatures (libgomp's ABI, stable since GCC 4.9).
        unsafe {
            Some(Gomp {
                parallel: std::mem::transmute::<
                    *mut c_void,
                    unsafe extern "C" fn(Body, *mut c_void, c_uint, c_uint),
                >(parallel),
                thread_num: std::mem::transmute::<*mut c_void, unsafe extern "C" fn() -> c_int>(
                    thread_num,
                ),
                num_threads: std::mem::transmute::<*mut c_void, unsafe extern "C" fn() -> c_int>(
                    num_threads,
                ),
            })
        }
    })
    .as_ref()
}

type Work<'a> = &'a (dyn Fn(usize, usize) + Sync);

unsafe extern "C" fn trampoline(data: *mut c_void) {
    // SAFETY: `data` points at the `Work` that `parallel` keeps alive until
    // GOMP_parallel has returned, i.e. until every team member is done.
    let work = unsafe { &*(data as *const Work) };
    let Some(g) = gomp() else { return };
    // SAFETY: called inside the parallel region GOMP_parallel opened.
    let (me, team) = unsafe { ((g.thread_num)(), (g.num_threads)()) };
    work(me.max(0) as usize, team.max(1) as usize);
}

/// Calls `work(part, parts)` for every `part` in `0..parts`, on up to
/// `threads` OpenMP threads (libtorch's team) or on this thread alone.
/// `work` must not panic (a panic cannot unwind through OpenMP and aborts).
pub(super) fn parallel(threads: usize, work: &(dyn Fn(usize, usize) + Sync)) {
    match gomp() {
        Some(g) if threads > 1 => {
            let w: Work = work;
            // SAFETY: `trampoline` matches libgomp's body signature and `w`
            // outlives the call, which returns only after the whole team has
            // finished.
            unsafe {
                (g.parallel)(
                    trampoline,
                    &w as *const Work as *mut c_void,
                    threads as c_uint,
                    0,
                )
            };
        }
        _ => work(0, 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn every_part_runs_exactly_once() {
        #[cfg(feature = "torch")]
        let _ = tch::get_num_threads(); // make sure libtorch (and libgomp) are loaded
        for threads in [1, 2, 3] {
            let seen: Vec<AtomicUsize> = (0..8).map(|_| AtomicUsize::new(0)).collect();
            let total = AtomicUsize::new(0);
            let team = AtomicUsize::new(0);
            parallel(threads, &|part, parts| {
                team.store(parts, Ordering::SeqCst);
                total.fetch_add(1, Ordering::SeqCst);
                if let Some(s) = seen.get(part) {
                    s.fetch_add(1, Ordering::SeqCst);
                }
            });
            assert_eq!(team.load(Ordering::SeqCst), total.load(Ordering::SeqCst));
            let parts = total.load(Ordering::SeqCst);
            assert!(parts >= 1 && parts <= threads);
            for (i, s) in seen.iter().enumerate() {
                assert_eq!(s.load(Ordering::SeqCst), usize::from(i < parts));
            }
        }
    }
}
