//! How a broker connection outlives a broker restart: after a lost connection (refused, reset,
//! timed out, or the broker still loading its append-only file) it is opened again after a
//! wait that doubles from [`FIRST_WAIT`] up to [`LONGEST_WAIT`], each attempt said on stderr,
//! until the connection's patience runs out; then the error stands.
//!
//! What must stay true: only a lost connection is retried (a refused command is an error at
//! once); the patience counts from the first failure of an outage, not from each attempt, so a
//! worker or a submitter gives up after about that long whatever the broker does meanwhile; a
//! patience of zero fails at once, as a connection without reconnection does.

use std::time::{Duration, Instant};

/// The first wait before a new connection is tried.
pub const FIRST_WAIT: Duration = Duration::from_millis(100);
/// The longest wait between two attempts.
pub const LONGEST_WAIT: Duration = Duration::from_secs(5);

/// How long a connection keeps trying to reach its broker, and how its attempts are told.
#[derive(Debug, Clone)]
pub struct Reconnect {
    /// How long after the first failure it gives up (zero: at once).
    pub patience: Duration,
    /// Put before each line it writes on stderr (`worker NAME: `).
    pub prefix: String,
}

impl Reconnect {
    /// No reconnection: the first lost connection is an error.
    pub fn never() -> Reconnect {
        Reconnect { patience: Duration::ZERO, prefix: String::new() }
    }
}

/// Whether `e` means the connection is gone (or the broker is not ready yet), not that the
/// broker refused the command.
pub fn is_lost(e: &redis::RedisError) -> bool {
    e.is_io_error()
        || e.is_connection_dropped()
        || e.is_connection_refusal()
        || e.is_timeout()
        || e.kind() == redis::ErrorKind::BusyLoadingError
}

/// One outage: when it began and the next wait.
#[derive(Debug)]
pub struct Outage {
    began: Instant,
    wait: Duration,
}

impl Outage {
    pub fn new() -> Outage {
        Outage { began: Instant::now(), wait: FIRST_WAIT }
    }

    /// The wait before the next attempt (doubling, at most [`LONGEST_WAIT`]) and the patience
    /// left after it; `None` once `patience` has run out.
    pub fn next_wait(&mut self, patience: Duration) -> Option<(Duration, Duration)> {
        let left = patience.saturating_sub(self.began.elapsed());
        if left.is_zero() {
            return None;
        }
        let wait = self.wait.min(left);
        self.wait = (self.wait * 2).min(LONGEST_WAIT);
        Some((wait, left - wait))
    }

    /// How long it has lasted.
    pub fn lasted(&self) -> Duration {
        self.began.elapsed()
    }
}

impl Default for Outage {
    fn default() -> Outage {
        Outage::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_double_up_to_the_longest_and_stop_with_the_patience() {
        let mut o = Outage::new();
        let patience = Duration::from_secs(60);
        let waits: Vec<Duration> = (0..8).map(|_| o.next_wait(patience).unwrap().0).collect();
        assert_eq!(waits[0], FIRST_WAIT);
        assert_eq!(waits[1], FIRST_WAIT * 2);
        assert!(waits.windows(2).all(|w| w[1] >= w[0]));
        assert_eq!(*waits.last().unwrap(), LONGEST_WAIT);
        assert!(Outage::new().next_wait(Duration::ZERO).is_none(), "no patience: no attempt");
        let mut short = Outage::new();
        let (wait, left) = short.next_wait(Duration::from_millis(30)).unwrap();
        assert!(wait <= Duration::from_millis(30) && left <= Duration::from_millis(30) - wait);
        std::thread::sleep(Duration::from_millis(40));
        assert!(short.next_wait(Duration::from_millis(30)).is_none(), "patience spent");
    }
}
