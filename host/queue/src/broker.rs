//! The broker: a Redis server holding one jobs stream per target profile (`ekb:jobs:PROFILE`,
//! consumer group `workers`) and one results stream per run (`ekb:results:RUN`), and the few
//! stream commands the submitter and the workers use on them.
//!
//! What must stay true: a job entry leaves its stream only when acknowledged after its result was
//! written ([`Broker::ack`]); a delivered job stays pending, owned by its worker, until then, and
//! one whose owner has been silent for the min-idle time is claimed by another worker
//! ([`Broker::reclaim`]); a worker's heartbeat ([`Broker::heartbeat`]) resets that silence
//! without taking the entry from anyone else.
//!
//! A connection opened with a [`Reconnect`] patience survives a broker restart: a command that
//! finds the connection lost is sent again on a new one ([`crate::reconnect`]), after the
//! consumer groups this connection made are made again (a broker that lost its data has none).
//! Sending again is safe for every command here: a job or a result published twice is answered or
//! recorded once (the submitter drops the second), a delivery whose answer was lost stays
//! pending and is claimed after the min-idle time.

use crate::job::{Job, Outcome};
use crate::reconnect::{is_lost, Outage, Reconnect};
use ekb_ir::Diagnostic;
use redis::streams::{StreamAutoClaimReply, StreamId, StreamReadReply};
use redis::{Commands, Connection, RedisResult, Value};
use std::time::Duration;

/// The consumer group of every jobs stream.
pub const GROUP: &str = "workers";

/// The jobs stream of a target profile.
pub fn jobs_stream(profile: &str) -> String {
    format!("ekb:jobs:{profile}")
}

/// The results stream of a run.
pub fn results_stream(run: &str) -> String {
    format!("ekb:results:{run}")
}

/// A job as delivered to a worker: its entry id in the jobs stream, and the job, or why it
/// could not be read (with the key and reply stream when those could).
pub struct Delivery {
    pub id: String,
    pub job: Result<Job, Unreadable>,
}

/// A jobs entry a worker cannot read.
pub struct Unreadable {
    pub key: Option<String>,
    pub reply: Option<String>,
    pub why: String,
}

/// An entry of a results stream: its id, the key of the job it answers, and the outcome (or
/// why it is unreadable).
pub struct Answer {
    pub id: String,
    pub key: String,
    pub outcome: Result<Outcome, String>,
}

/// A connection to the broker.
pub struct Broker {
    url: String,
    client: redis::Client,
    conn: Connection,
    reconnect: Reconnect,
    /// The streams whose consumer group this connection made sure of: made again after a
    /// reconnection.
    groups: Vec<String>,
}

/// How long one reply may take before the connection counts as lost (the longest blocking
/// read here is a few seconds).
const READ_TIMEOUT: Duration = Duration::from_secs(30);

/// A broker error as a diagnostic naming the broker and the command.
fn failed(url: &str, what: &str, e: redis::RedisError) -> Diagnostic {
    Diagnostic::error(format!("the broker at {url} failed {what}: {e}")).with_hint(
        "is redis-server running there (`redis-server --port 6379 --appendonly yes`, docs/scaleout.md)?",
    )
}

impl Broker {
    /// Connects to `url` (`redis://HOST:PORT`) and checks that it answers; a lost connection is
    /// an error at once.
    pub fn connect(url: &str) -> Result<Broker, Diagnostic> {
        Broker::open(url, Reconnect::never())
    }

    /// Connects to `url` and checks that it answers; a broker that cannot be reached, now or
    /// later, is tried again within `reconnect`'s patience.
    pub fn open(url: &str, reconnect: Reconnect) -> Result<Broker, Diagnostic> {
        let client = redis::Client::open(url).map_err(|e| {
            Diagnostic::error(format!("`{url}` is not a broker address: {e}"))
                .with_expected("redis://HOST:PORT, e.g. redis://127.0.0.1:6379")
        })?;
        let mut outage = Outage::new();
        let conn = loop {
            match fresh(&client) {
                Ok(conn) => break conn,
                Err(e) if is_lost(&e) => wait_out(&mut outage, &reconnect, url, "to accept a connection", e)?,
                Err(e) => return Err(failed(url, "to accept a connection", e)),
            }
        };
        Ok(Broker { url: url.into(), client, conn, reconnect, groups: Vec::new() })
    }

    /// Runs `op` on the connection; when the connection is lost, reconnects (within the
    /// patience) and runs it again.
    fn run<T>(
        &mut self,
        what: &str,
        mut op: impl FnMut(&mut Connection) -> RedisResult<T>,
    ) -> Result<T, Diagnostic> {
        let mut outage: Option<Outage> = None;
        loop {
            let e = match op(&mut self.conn) {
                Ok(v) => {
                    if let Some(o) = outage {
                        eprintln!(
                            "{}reconnected to the broker at {} after {:.1} s",
                            self.reconnect.prefix,
                            self.url,
                            o.lasted().as_secs_f64()
                        );
                    }
                    return Ok(v);
                }
                Err(e) if is_lost(&e) => e,
                Err(e) => return Err(failed(&self.url, what, e)),
            };
            let o = outage.get_or_insert_with(Outage::new);
            let mut why = e;
            // A new connection, with this connection's groups made again.
            self.conn = loop {
                wait_out(o, &self.reconnect, &self.url, what, why)?;
                let renewed = fresh(&self.client)
                    .and_then(|mut c| self.groups.iter().try_for_each(|s| make_group(&mut c, s)).map(|()| c));
                match renewed {
                    Ok(c) => break c,
                    Err(e) if is_lost(&e) => why = e,
                    Err(e) => return Err(failed(&self.url, what, e)),
                }
            };
        }
    }

    /// The address it was connected with.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Whether the broker syncs every write to its append-only file before answering
    /// (`appendonly yes`, `appendfsync always`), which at-least-once delivery across a broker
    /// restart assumes; `None` when it does not say (`CONFIG` disabled).
    pub fn syncs_every_write(&mut self) -> Option<bool> {
        let mut get = |name: &str| -> Option<String> {
            let pair: Vec<String> =
                self.run("CONFIG GET", |c| redis::cmd("CONFIG").arg(&["GET", name]).query(c)).ok()?;
            pair.into_iter().nth(1)
        };
        Some(get("appendonly")? == "yes" && get("appendfsync")? == "always")
    }

    /// Creates `stream` and its `workers` group when missing (a group made here sees every
    /// entry already in the stream).
    pub fn ensure_group(&mut self, stream: &str) -> Result<(), Diagnostic> {
        self.run(&format!("to create group `{GROUP}` on `{stream}`"), |c| make_group(c, stream))?;
        if !self.groups.iter().any(|s| s == stream) {
            self.groups.push(stream.to_string());
        }
        Ok(())
    }

    /// Appends `job` to the jobs stream of `profile`.
    pub fn publish(&mut self, profile: &str, job: &Job) -> Result<(), Diagnostic> {
        let stream = jobs_stream(profile);
        let text = serde_json::to_string(job).expect("a job serialises");
        let fields = [("key", job.key.as_str()), ("reply", job.reply.as_str()), ("job", text.as_str())];
        let _: String = self.run(&format!("XADD to `{stream}`"), |c| c.xadd(&stream, "*", &fields))?;
        Ok(())
    }

    /// A new job of `stream` for `consumer`, waiting at most `block` for one.
    pub fn next_job(
        &mut self,
        stream: &str,
        consumer: &str,
        block: Duration,
    ) -> Result<Option<Delivery>, Diagnostic> {
        let block_ms = block.as_millis().max(1).to_string();
        let reply: Option<StreamReadReply> = self.run(&format!("XREADGROUP on `{stream}`"), |c| {
            redis::cmd("XREADGROUP")
                .arg(&["GROUP", GROUP, consumer, "COUNT", "1", "BLOCK", &block_ms, "STREAMS", stream, ">"])
                .query(c)
        })?;
        Ok(reply.and_then(|r| r.keys.into_iter().flat_map(|k| k.ids).next()).map(delivery))
    }

    /// A job of `stream` whose owner has been silent for `min_idle`, now owned by `consumer`.
    pub fn reclaim(
        &mut self,
        stream: &str,
        consumer: &str,
        min_idle: Duration,
    ) -> Result<Option<Delivery>, Diagnostic> {
        let idle_ms = min_idle.as_millis().to_string();
        let reply: StreamAutoClaimReply = self.run(&format!("XAUTOCLAIM on `{stream}`"), |c| {
            redis::cmd("XAUTOCLAIM").arg(&[stream, GROUP, consumer, &idle_ms, "0", "COUNT", "1"]).query(c)
        })?;
        Ok(reply.claimed.into_iter().next().map(delivery))
    }

    /// Resets the idle time of `consumer`'s pending entry `id` (XCLAIM to itself, JUSTID):
    /// the worker is alive and still on it.
    pub fn heartbeat(&mut self, stream: &str, consumer: &str, id: &str) -> Result<(), Diagnostic> {
        let _: Value = self.run(&format!("XCLAIM on `{stream}`"), |c| {
            redis::cmd("XCLAIM").arg(&[stream, GROUP, consumer, "0", id, "JUSTID"]).query(c)
        })?;
        Ok(())
    }

    /// Appends the outcome of job `key` to the results stream `reply`.
    pub fn post(&mut self, reply: &str, key: &str, outcome: &Outcome) -> Result<(), Diagnostic> {
        let text = serde_json::to_string(outcome).expect("an outcome serialises");
        let _: String = self.run(&format!("XADD to `{reply}`"), |c| {
            c.xadd(reply, "*", &[("key", key), ("outcome", text.as_str())])
        })?;
        Ok(())
    }

    /// Acknowledges entry `id` of `stream` and deletes it: the job is done.
    pub fn ack(&mut self, stream: &str, id: &str) -> Result<(), Diagnostic> {
        let _: Value = self.run(&format!("XACK on `{stream}`"), |c| {
            redis::pipe().cmd("XACK").arg(&[stream, GROUP, id]).cmd("XDEL").arg(&[stream, id]).query(c)
        })?;
        Ok(())
    }

    /// The entries of results stream `reply` after id `after`, waiting at most `block` for one.
    pub fn results(&mut self, reply: &str, after: &str, block: Duration) -> Result<Vec<Answer>, Diagnostic> {
        let block_ms = block.as_millis().max(1).to_string();
        let read: Option<StreamReadReply> = self.run(&format!("XREAD on `{reply}`"), |c| {
            redis::cmd("XREAD").arg(&["COUNT", "64", "BLOCK", &block_ms, "STREAMS", reply, after]).query(c)
        })?;
        let entries: Vec<StreamId> =
            read.map(|r| r.keys.into_iter().flat_map(|k| k.ids).collect()).unwrap_or_default();
        Ok(entries
            .into_iter()
            .map(|e| {
                let key = field(&e, "key").unwrap_or_default();
                let outcome = field(&e, "outcome")
                    .ok_or_else(|| "no `outcome` field".to_string())
                    .and_then(|t| serde_json::from_str(&t).map_err(|err| err.to_string()));
                Answer { id: e.id, key, outcome }
            })
            .collect())
    }

    /// Deletes entry `id` of results stream `reply` (recorded, or a duplicate).
    pub fn drop_result(&mut self, reply: &str, id: &str) -> Result<(), Diagnostic> {
        let _: usize = self.run(&format!("XDEL on `{reply}`"), |c| c.xdel(reply, &[id]))?;
        Ok(())
    }

    /// Pending entry `id` of `stream`: the consumer that owns it and how many times it was
    /// delivered (heartbeats do not count); `None` once it is acknowledged.
    pub fn pending_entry(&mut self, stream: &str, id: &str) -> Result<Option<(String, usize)>, Diagnostic> {
        let reply: redis::streams::StreamPendingCountReply =
            self.run(&format!("XPENDING on `{stream}`"), |c| c.xpending_count(stream, GROUP, id, id, 1))?;
        Ok(reply.ids.into_iter().next().map(|p| (p.consumer, p.times_delivered)))
    }
}

/// A new connection to `client`'s broker that has answered a PING.
fn fresh(client: &redis::Client) -> RedisResult<Connection> {
    let mut conn = client.get_connection_with_timeout(Duration::from_secs(5))?;
    conn.set_read_timeout(Some(READ_TIMEOUT))?;
    redis::cmd("PING").query::<String>(&mut conn)?;
    Ok(conn)
}

/// Creates `stream` and its `workers` group when missing (a group made here sees every entry
/// already in the stream).
fn make_group(conn: &mut Connection, stream: &str) -> RedisResult<()> {
    match conn.xgroup_create_mkstream(stream, GROUP, "0") {
        Err(e) if e.code() == Some("BUSYGROUP") => Ok(()),
        made => made,
    }
}

/// Waits before the next attempt of `outage`, saying so on stderr; the error `e` of `what`
/// once the patience is spent.
fn wait_out(
    outage: &mut Outage,
    reconnect: &Reconnect,
    url: &str,
    what: &str,
    e: redis::RedisError,
) -> Result<(), Diagnostic> {
    let Some((wait, left)) = outage.next_wait(reconnect.patience) else {
        let d = failed(url, what, e);
        return Err(match reconnect.patience.is_zero() {
            true => d,
            false => d.with_note(format!(
                "gave up after {:.0} s of reconnecting (the patience, `--reconnect-s`)",
                outage.lasted().as_secs_f64()
            )),
        });
    };
    eprintln!(
        "{}the broker at {url} is unreachable ({e}): reconnecting in {:.1} s (giving up in {:.0} s)",
        reconnect.prefix,
        wait.as_secs_f64(),
        left.as_secs_f64()
    );
    std::thread::sleep(wait);
    Ok(())
}

/// A string field of a stream entry.
fn field(entry: &StreamId, name: &str) -> Option<String> {
    entry.get::<String>(name)
}

fn delivery(entry: StreamId) -> Delivery {
    let job = match field(&entry, "job") {
        None => Err("no `job` field".to_string()),
        Some(text) => serde_json::from_str::<Job>(&text).map_err(|e| e.to_string()),
    };
    let job = job.map_err(|why| Unreadable { key: field(&entry, "key"), reply: field(&entry, "reply"), why });
    Delivery { id: entry.id, job }
}
