//! The reference outputs of a task on a run's seeds, shared by every payload built for it:
//! either given (computed by the caller) or pending (computed by whichever build asks first,
//! the others waiting for that result), so a caller can start them on a thread of its own while
//! the payloads lower and compile, and no two builds compute them twice.
//!
//! What it must keep true: every clone answers the same value; a pending computation runs at
//! most once; `None` means the interpreter failed, and each build then computes the references
//! again itself to report the failure located in the task's file.

use ekb_ir::tensor::Tensor;
use std::fmt;
use std::sync::{Arc, OnceLock};

/// The outputs of each seed, in the seeds' order.
pub type Outputs = Arc<Vec<Vec<Tensor>>>;

type Compute = Arc<dyn Fn() -> Option<Outputs> + Send + Sync>;

/// Reference outputs, given or pending (see the module notes).
#[derive(Clone)]
pub struct References {
    cell: Arc<OnceLock<Option<Outputs>>>,
    compute: Option<Compute>,
}

impl References {
    /// Outputs the caller computed.
    pub fn given(outputs: Vec<Vec<Tensor>>) -> References {
        References { cell: Arc::new(OnceLock::from(Some(Arc::new(outputs)))), compute: None }
    }

    /// Outputs `compute` gives when first asked for (`None`: the interpreter failed).
    pub fn pending(compute: impl Fn() -> Option<Outputs> + Send + Sync + 'static) -> References {
        References { cell: Arc::new(OnceLock::new()), compute: Some(Arc::new(compute)) }
    }

    /// The outputs, computed now if nobody has yet (a caller that arrives while another
    /// computes them waits for that result).
    pub fn get(&self) -> Option<Outputs> {
        self.cell.get_or_init(|| self.compute.as_ref().and_then(|c| c())).clone()
    }
}

impl PartialEq for References {
    /// The same shared value (clones of one another).
    fn eq(&self, other: &References) -> bool {
        Arc::ptr_eq(&self.cell, &other.cell)
    }
}

impl fmt::Debug for References {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.cell.get() {
            Some(Some(r)) => write!(f, "References({} seeds)", r.len()),
            Some(None) => f.write_str("References(failed)"),
            None => f.write_str("References(pending)"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ekb_ir::{DType, TensorType};
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn one(v: f64) -> Vec<Vec<Tensor>> {
        vec![vec![Tensor { ty: TensorType::new(DType::F32, [1]), data: vec![v] }]]
    }

    #[test]
    fn a_pending_computation_runs_once_for_every_clone_and_thread() {
        let runs = Arc::new(AtomicUsize::new(0));
        let counted = runs.clone();
        let refs = References::pending(move || {
            counted.fetch_add(1, Ordering::SeqCst);
            std::thread::sleep(std::time::Duration::from_millis(20));
            Some(Arc::new(one(2.0)))
        });
        assert_eq!(format!("{refs:?}"), "References(pending)");
        let got: Vec<f64> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|_| {
                    let r = refs.clone();
                    s.spawn(move || r.get().expect("computed")[0][0].data[0])
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(got, vec![2.0; 4]);
        assert_eq!(runs.load(Ordering::SeqCst), 1);
        assert_eq!(format!("{refs:?}"), "References(1 seeds)");
    }

    #[test]
    fn given_outputs_and_failures_are_answered_as_they_are() {
        assert_eq!(References::given(one(1.0)).get().unwrap()[0][0].data, vec![1.0]);
        let failed = References::pending(|| None);
        assert!(failed.get().is_none());
        assert_eq!(format!("{failed:?}"), "References(failed)");
        assert_ne!(failed, References::pending(|| None));
        assert_eq!(failed, failed.clone());
    }
}
