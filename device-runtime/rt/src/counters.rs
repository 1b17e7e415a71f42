//! Performance counters through `perf_event_open` (the perf-event2 crate): hardware counters
//! where the PMU allows (cycles, instructions, cache references and misses, branch misses),
//! software counters from the kernel everywhere (task clock, page faults, context switches,
//! CPU migrations).
//!
//! The kernel process opens its counters on itself with `inherit` set, disabled, *before* it
//! starts its kernel threads, so the threads it starts afterwards are counted with it; reading
//! an inherited counter sums the live threads' counts. Counters are enabled only around the
//! counted executions (`docs/runtime.md`), never while timing samples are taken.
//!
//! What it must keep true: a counter that cannot be opened or read is reported
//! `Unavailable` with the reason (the errno and what it means here: no PMU exposed, forbidden by
//! `perf_event_paranoid`, not implemented under qemu-user), never as zero; a counter the kernel
//! multiplexed is extrapolated by `time_enabled / time_running` and marked `scaled`.

use crate::device::Device;
use ekb_wire::protocol::{Availability, Counter, CounterKind, CounterReading, CounterSupport};
use perf_event::events::{Event, Hardware, Software};
use perf_event::{Builder, ReadFormat};
use std::io;
use std::os::fd::{AsRawFd, RawFd};

/// The counters the runtime asks for, in report order.
pub const NAMES: [&str; 9] = [
    "cycles",
    "instructions",
    "cache-references",
    "cache-misses",
    "branch-misses",
    "task-clock",
    "page-faults",
    "context-switches",
    "cpu-migrations",
];

fn kind_of(i: usize) -> CounterKind {
    if i < 5 {
        CounterKind::Hardware
    } else {
        CounterKind::Software
    }
}

fn builder(i: usize) -> Builder<'static> {
    fn b(e: impl Event + 'static) -> Builder<'static> {
        Builder::new(e)
    }
    let mut builder = match i {
        0 => b(Hardware::CPU_CYCLES),
        1 => b(Hardware::INSTRUCTIONS),
        2 => b(Hardware::CACHE_REFERENCES),
        3 => b(Hardware::CACHE_MISSES),
        4 => b(Hardware::BRANCH_MISSES),
        5 => b(Software::TASK_CLOCK),
        6 => b(Software::PAGE_FAULTS),
        7 => b(Software::CONTEXT_SWITCHES),
        _ => b(Software::CPU_MIGRATIONS),
    };
    builder
        .observe_self()
        .any_cpu()
        .inherit(true)
        .enabled(false)
        .read_format(ReadFormat::TOTAL_TIME_ENABLED | ReadFormat::TOTAL_TIME_RUNNING);
    builder
}

/// Why `perf_event_open` failed for counter `i`, in words.
fn reason(i: usize, e: &io::Error, emulation: Option<&str>) -> String {
    let errno = e.raw_os_error().unwrap_or(0);
    let what = match errno {
        libc::ENOSYS => {
            return match emulation {
                Some(_) => "not supported: qemu-user does not emulate perf_event_open (ENOSYS)".to_string(),
                None => {
                    "not supported: perf_event_open is not implemented by this kernel (ENOSYS)".to_string()
                }
            }
        }
        libc::ENOENT | libc::EOPNOTSUPP | libc::ENODEV | libc::EINVAL
            if kind_of(i) == CounterKind::Hardware =>
        {
            "not supported: no hardware PMU counts this event here (a virtual machine without a virtual \
             PMU, or a CPU the kernel's PMU driver does not know)"
                .to_string()
        }
        libc::EACCES | libc::EPERM => {
            let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
                .map(|s| s.trim().to_string())
                .unwrap_or_else(|_| "unknown".into());
            format!("not permitted: kernel.perf_event_paranoid is {paranoid} (lower it, or run as root)")
        }
        _ => "perf_event_open failed".to_string(),
    };
    format!("{what} ({e})")
}

/// Which counters work on this machine: each one opened once on this process and closed.
pub fn support(device: &Device) -> Vec<CounterSupport> {
    (0..NAMES.len())
        .map(|i| CounterSupport {
            name: NAMES[i].to_string(),
            kind: kind_of(i),
            availability: match builder(i).build() {
                Ok(_) => Availability::Available,
                Err(e) => Availability::Unavailable { reason: reason(i, &e, device.emulation.as_deref()) },
            },
        })
        .collect()
}

/// The counters of the kernel process.
pub struct CounterSet {
    counters: Vec<Result<perf_event::Counter, String>>,
}

/// One counter's raw reading: count, time enabled, time running (ns).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct Raw {
    pub count: u64,
    pub enabled_ns: u64,
    pub running_ns: u64,
    /// Whether the counter was open and read.
    pub ok: bool,
}

impl CounterSet {
    /// Opens every counter on the calling process, disabled, inherited by threads started
    /// afterwards.
    pub fn open(emulation: Option<&str>) -> CounterSet {
        let counters =
            (0..NAMES.len()).map(|i| builder(i).build().map_err(|e| reason(i, &e, emulation))).collect();
        CounterSet { counters }
    }

    /// The descriptors of the open counters (the syscall filter lets the process read them).
    pub fn fds(&self) -> Vec<RawFd> {
        self.counters.iter().filter_map(|c| c.as_ref().ok().map(AsRawFd::as_raw_fd)).collect()
    }

    /// Zeroes every open counter.
    pub fn reset(&mut self) {
        for c in self.counters.iter_mut().flatten() {
            // A failing ioctl shows as a counter that never ran, reported as such.
            let _ = c.reset();
        }
    }

    /// Starts counting (counters accumulate across enable/disable spans).
    pub fn enable(&mut self) {
        for c in self.counters.iter_mut().flatten() {
            let _ = c.enable();
        }
    }

    pub fn disable(&mut self) {
        for c in self.counters.iter_mut().flatten() {
            let _ = c.disable();
        }
    }

    /// Reads every counter into `out` (one entry per counter, in [`NAMES`] order).
    pub fn read(&mut self, out: &mut [Raw; NAMES.len()]) {
        for (c, o) in self.counters.iter_mut().zip(out.iter_mut()) {
            *o = Raw::default();
            if let Ok(r) = c
                .as_mut()
                .map(|c| c.read_count_and_time())
                .unwrap_or_else(|_| Err(io::ErrorKind::NotFound.into()))
            {
                *o = Raw { count: r.count, enabled_ns: r.time_enabled, running_ns: r.time_running, ok: true };
            }
        }
    }

    /// The reasons of the counters that could not be opened (in [`NAMES`] order; `None` for
    /// open ones).
    pub fn errors(&self) -> Vec<Option<String>> {
        self.counters.iter().map(|c| c.as_ref().err().cloned()).collect()
    }
}

/// Each plan step's time over `runs` executions, as counters (`KERNEL (step N): time (CLOCK,
/// ns)`), for the steps' kernel `names`.
pub fn step_times(names: &[String], step_ns: &[u64], runs: u64, clock: &str) -> Vec<Counter> {
    names
        .iter()
        .zip(step_ns)
        .enumerate()
        .map(|(i, (name, &total))| Counter {
            name: format!("{name} (step {i}): time ({clock}, ns)"),
            kind: CounterKind::Step,
            reading: CounterReading::Counted { total, runs, scaled: false },
        })
        .collect()
}

/// The report's counters from raw readings over `runs` executions; `errors` are the open
/// failures (from [`CounterSet::errors`]).
pub fn readings(raw: &[Raw], errors: &[Option<String>], runs: u64) -> Vec<Counter> {
    (0..NAMES.len())
        .map(|i| {
            let reading = match (errors.get(i).cloned().flatten(), raw.get(i)) {
                (Some(reason), _) => CounterReading::Unavailable { reason },
                (None, Some(r)) if r.ok && r.running_ns > 0 => {
                    let scaled = r.running_ns < r.enabled_ns;
                    let total = if scaled {
                        (r.count as u128 * r.enabled_ns as u128 / r.running_ns as u128) as u64
                    } else {
                        r.count
                    };
                    CounterReading::Counted { total, runs, scaled }
                }
                (None, Some(r)) if r.ok => CounterReading::Unavailable {
                    reason: "the counter never ran: the PMU was busy with other events".into(),
                },
                (None, _) => CounterReading::Unavailable { reason: "the counter could not be read".into() },
            };
            Counter { name: NAMES[i].to_string(), kind: kind_of(i), reading }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn software_counters_count_this_process_and_inherit_to_new_threads() {
        let mut set = CounterSet::open(None);
        let errors = set.errors();
        // task-clock and page-faults are the kernel's own: they work wherever perf does.
        if let Some(reason) = &errors[5] {
            panic!("task-clock unavailable on a native run: {reason}");
        }
        set.reset();
        set.enable();
        // Touch fresh pages on another thread: its page faults count only through `inherit`.
        std::thread::spawn(|| {
            let m = crate::sys::Mapping::anonymous(64 * crate::sys::page_size()).unwrap();
            for p in (0..m.len()).step_by(crate::sys::page_size()) {
                // SAFETY: inside the fresh read-write mapping.
                unsafe { std::ptr::write_volatile(m.as_ptr().add(p), 1) };
            }
        })
        .join()
        .unwrap();
        let mut raw = [Raw::default(); NAMES.len()];
        set.disable();
        set.read(&mut raw);
        let report = readings(&raw, &errors, 1);
        match &report[6].reading {
            CounterReading::Counted { total, runs: 1, .. } => assert!(*total >= 64, "{total}"),
            other => panic!("page-faults: {other:?}"),
        }
        assert_eq!(report[6].kind, CounterKind::Software);
        assert_eq!(report[0].kind, CounterKind::Hardware);
    }

    #[test]
    fn multiplexed_and_missing_counters_are_marked() {
        let raw = [Raw { count: 100, enabled_ns: 10, running_ns: 5, ok: true }; NAMES.len()];
        let mut errors = vec![None; NAMES.len()];
        errors[0] = Some("no PMU".to_string());
        let r = readings(&raw, &errors, 4);
        assert_eq!(r[0].reading, CounterReading::Unavailable { reason: "no PMU".into() });
        assert_eq!(r[1].reading, CounterReading::Counted { total: 200, runs: 4, scaled: true });
        let idle = [Raw { count: 0, enabled_ns: 10, running_ns: 0, ok: true }; NAMES.len()];
        assert!(matches!(readings(&idle, &errors, 1)[2].reading, CounterReading::Unavailable { .. }));
    }

    #[test]
    fn reasons_name_the_cause() {
        let enosys = io::Error::from_raw_os_error(libc::ENOSYS);
        assert!(reason(0, &enosys, Some("qemu-user (…)")).contains("qemu-user does not emulate"));
        let enoent = io::Error::from_raw_os_error(libc::ENOENT);
        assert!(reason(0, &enoent, None).starts_with("not supported: no hardware PMU"));
        let eacces = io::Error::from_raw_os_error(libc::EACCES);
        assert!(reason(5, &eacces, None).contains("perf_event_paranoid"));
    }
}
