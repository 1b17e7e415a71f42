//! Scale-out of the evaluation over a pool of devices, through a broker's streams (Redis
//! Streams; docs/scaleout.md says how to run one and why Redis).
//!
//! `ekb eval --queue URL` turns each candidate into a content-addressed [`job`] and [`submit`]s
//! it to the jobs stream of its target profile; `ekb worker` processes, one per board or GPU,
//! take jobs of their profile ([`worker`]), evaluate them through the same path as a local
//! `ekb eval`, and post the results to the run's results stream, which the submitter records in
//! the run directory. [`broker`] holds the stream commands, [`server`] starts a private broker
//! (tests, the simulation).
//!
//! Delivery is at least once, recording exactly once: a job is acknowledged only after its result
//! is written, a silent worker's job is redelivered to another, and a result whose key was
//! already recorded is dropped.

pub mod broker;
pub mod job;
pub mod reconnect;
pub mod server;
pub mod simulate;
pub mod submit;
pub mod worker;
