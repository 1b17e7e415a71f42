//! The tune of one workload: its space, its search, its cost model, the best point so far
//! (loaded, so that every candidate is timed against it), and its records in the database.
//!
//! A tune starts from what the database knows of the graph: records measured on this device
//! are never measured again (and, with `resume`, count as trials done); records of every device
//! of the profile train the model. When this device has no record of the graph, the default
//! schedule is the first trial, so the default is always a candidate and a tuned result is
//! never slower than it (as measured).
//!
//! Candidates are measured in this process ([`crate::measure`], one at a time against the best
//! so far), or elsewhere ([`crate::remote`], a batch at a time against the default schedule).
//!
//! What must stay true: every measured candidate becomes one record before the next is
//! measured (measured elsewhere: before the next batch); a candidate is the best only when it is correct and faster than the best so far in
//! a paired comparison; illegal points (refused while lowering) are counted, never measured.

use crate::db::{device_fingerprint, sha256, Db, Outcome, Record};
use crate::features::{loop_features, roofline};
use crate::measure::{HostBench, Loaded};
use crate::model::{Model, Params};
use crate::remote::{Paired, Remote};
use crate::search::{Scored, Search, SearchParams};
use crate::space::{Point, Space};
use crate::Workload;
use ekb_deploy::driver::{self, BackendChoice, CompileOptions, Program, Sources, Stage};
use ekb_ir::l1::print::print as print_l1;
use ekb_ir::TargetProfile;
use ekb_lower::{Knobs, KNOBS};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// How a tune runs.
#[derive(Debug, Clone)]
pub struct TuneOptions {
    /// Threads of the kernels' parallel loops (0: this machine's cores).
    pub threads: usize,
    /// Candidates measured between two fits of the model.
    pub batch: usize,
    /// Rounds of a paired comparison, and each side's time per round.
    pub rounds: usize,
    pub round: Duration,
    /// Whether this device's records of a graph count as trials done.
    pub resume: bool,
    pub seed: u64,
    pub search: SearchParams,
    /// Whether the graph is lowered for the target's GPU (its kernels' knobs searched) rather
    /// than its CPU; such a tune measures its candidates elsewhere ([`crate::remote`]).
    pub gpu: bool,
}

impl Default for TuneOptions {
    fn default() -> TuneOptions {
        TuneOptions {
            threads: 0,
            batch: 8,
            rounds: 4,
            round: Duration::from_millis(40),
            resume: false,
            seed: 0,
            search: SearchParams::default(),
            gpu: false,
        }
    }
}

/// What happened to one candidate, as the progress display shows it.
#[derive(Debug, Clone)]
pub struct Event {
    pub workload: String,
    pub trial: usize,
    pub trials: usize,
    pub outcome: Outcome,
    pub time_ms: Option<f64>,
    pub best_ms: Option<f64>,
    pub default_ms: Option<f64>,
}

/// Where a tune stands.
#[derive(Debug, Clone)]
pub struct Summary {
    pub workload: String,
    pub graph_sha256: String,
    pub default_ms: Option<f64>,
    pub best_ms: Option<f64>,
    pub best_recipe: Option<String>,
    /// Trials done on this device (counting earlier runs' with `resume`).
    pub trials: usize,
    /// Candidates this run measured, by outcome.
    pub measured: HashMap<Outcome, usize>,
    /// Bred points refused while lowering.
    pub illegal: usize,
    /// Whether the search ran out of new programs before its budget.
    pub exhausted: bool,
    pub wall: Duration,
}

/// The best point (loaded, when measured in this process) and its time on the tune's scale.
struct Best {
    loaded: Option<Loaded>,
    time_ms: f64,
    recipe: String,
}

/// Where a tune measures its candidates.
enum Bench<'w> {
    /// In this process.
    Here(HostBench),
    /// Elsewhere, paired with the default; the scale is the default's time as first measured
    /// (known after the first answer, or from the records of an earlier run).
    Remote { remote: Box<dyn Remote + 'w>, scale: Option<f64> },
}

/// One workload's tune.
pub struct Tuner<'w> {
    w: &'w Workload,
    target: &'w TargetProfile,
    opts: TuneOptions,
    space: Space,
    bench: Bench<'w>,
    search: Search,
    model: Model,
    device: String,
    graph_sha256: String,
    best: Option<Best>,
    default_ms: Option<f64>,
    trials: usize,
    summary: Summary,
    /// Points lowered so far (lowering is cheap, but the model is refitted on every record).
    lowered: HashMap<Point, Result<Lowered, String>>,
}

/// A lowered point: the program's fingerprint and its features.
#[derive(Clone)]
struct Lowered {
    program: String,
    features: Vec<f64>,
}

impl<'w> Tuner<'w> {
    /// Prepares the tune of `w` for `target`'s CPU (or its GPU, with `opts.gpu`): the space, the
    /// reference outputs (measured here) or `remote`, where candidates are measured instead, the
    /// records the database holds for the graph, and the model fitted on them. A GPU tune needs
    /// `remote`: this process runs CPU candidates only.
    pub fn new(
        w: &'w Workload,
        target: &'w TargetProfile,
        db: &Db,
        opts: TuneOptions,
        remote: Option<Box<dyn Remote + 'w>>,
    ) -> Result<Tuner<'w>, String> {
        let (bench, device) = match remote {
            None if opts.gpu => {
                return Err(
                    "a GPU tune measures its candidates through a device runtime, not in this process".into(),
                )
            }
            None => {
                (Bench::Here(HostBench::new(w, opts.threads, opts.rounds, opts.round)?), device_fingerprint())
            }
            Some(remote) => {
                let device = remote.device();
                (Bench::Remote { remote, scale: None }, device)
            }
        };
        let graph_sha256 = graph_sha256(&w.graph);
        let mut t = Tuner {
            w,
            target,
            space: Space::new(&w.graph, target, opts.gpu),
            bench,
            search: Search::new(opts.search, opts.seed),
            model: Model::default(),
            device,
            graph_sha256: graph_sha256.clone(),
            best: None,
            default_ms: None,
            trials: 0,
            summary: Summary {
                workload: w.name.clone(),
                graph_sha256,
                default_ms: None,
                best_ms: None,
                best_recipe: None,
                trials: 0,
                measured: HashMap::new(),
                illegal: 0,
                exhausted: false,
                wall: Duration::ZERO,
            },
            lowered: HashMap::new(),
            opts,
        };
        let here: Vec<Record> =
            db.of_graph(&t.graph_sha256).filter(|r| r.device == t.device).cloned().collect();
        for r in &here {
            t.search.seen.insert(r.program_sha256.clone());
        }
        if t.opts.resume {
            t.trials = here.iter().map(|r| r.trial).max().unwrap_or(0);
        }
        // The best of this device's records becomes the point to beat, at its recorded time.
        let default_program = t.lower(&t.space.default_point()).map(|l| l.program).ok();
        t.default_ms = here
            .iter()
            .find(|r| Some(&r.program_sha256) == default_program.as_ref() && r.outcome == Outcome::Ok)
            .and_then(|r| r.time_ms);
        if let Some(r) = here
            .iter()
            .filter(|r| r.outcome == Outcome::Ok && r.time_ms.is_some())
            .min_by(|a, b| a.time_ms.unwrap().total_cmp(&b.time_ms.unwrap()))
        {
            let best = |loaded| Best { loaded, time_ms: r.time_ms.unwrap(), recipe: r.recipe.clone() };
            match &mut t.bench {
                Bench::Here(_) => {
                    if let Some(loaded) = t.space.point_of(&r.recipe).ok().and_then(|p| t.build(&p).ok()) {
                        t.best = Some(best(Some(loaded)));
                    }
                }
                Bench::Remote { scale, .. } => {
                    *scale = t.default_ms;
                    t.best = Some(best(None));
                }
            }
        }
        t.fit(db);
        t.refresh();
        Ok(t)
    }

    /// Trials done so far on this device (with `resume`, counting earlier runs').
    pub fn trials(&self) -> usize {
        self.trials
    }

    pub fn summary(&self) -> &Summary {
        &self.summary
    }

    /// The best time so far on the tune's scale.
    pub fn best_ms(&self) -> Option<f64> {
        self.best.as_ref().map(|b| b.time_ms)
    }

    /// Measures up to `n` more candidates (the default first, if this device has no record of
    /// the graph), appending each to `db`, then refits the model. Returns how many were measured
    /// (fewer than `n` when the space has no new program left).
    pub fn step(
        &mut self,
        db: &mut Db,
        n: usize,
        total: usize,
        progress: &mut dyn FnMut(&Event),
    ) -> Result<usize, String> {
        let start = Instant::now();
        let mut done = 0;
        let default = self.space.default_point();
        let default_lowered = self.lower(&default);
        if let Ok(l) = &default_lowered {
            if !self.search.seen.contains(&l.program) && n > 0 {
                self.search.seen.insert(l.program.clone());
                let program = l.program.clone();
                self.measure_batch(db, vec![(default, program)], total, progress)?;
                done += 1;
            }
        }
        while done < n {
            let parents = self.parents(db);
            let want = (n - done).min(self.opts.batch);
            let space = self.space.clone();
            let mut search = std::mem::replace(&mut self.search, Search::new(self.opts.search, 0));
            let batch = search.propose(&space, &parents, want, |p: &Point| {
                let l = self.lower(p).ok()?;
                let score = if self.model.is_fitted() {
                    self.model.predict(&l.features)
                } else {
                    roofline(&l.features, self.target)
                };
                Some(Scored { point: p.clone(), program: l.program, features: l.features, score })
            });
            self.search = search;
            if batch.is_empty() {
                self.summary.exhausted = true;
                break;
            }
            let batch: Vec<(Point, String)> = batch.into_iter().map(|s| (s.point, s.program)).collect();
            done += batch.len();
            self.measure_batch(db, batch, total, progress)?;
            self.fit(db);
        }
        self.summary.wall += start.elapsed();
        self.refresh();
        Ok(done)
    }

    fn refresh(&mut self) {
        self.summary.trials = self.trials;
        self.summary.illegal = self.search.illegal;
        self.summary.default_ms = self.default_ms;
        self.summary.best_ms = self.best_ms();
        self.summary.best_recipe = self.best.as_ref().map(|b| b.recipe.clone());
    }

    /// The fastest correct points the database knows for this graph (any device), fastest first.
    fn parents(&self, db: &Db) -> Vec<Point> {
        let mut ok: Vec<&Record> = db
            .of_graph(&self.graph_sha256)
            .filter(|r| r.outcome == Outcome::Ok && r.time_ms.is_some())
            .collect();
        ok.sort_by(|a, b| a.time_ms.unwrap().total_cmp(&b.time_ms.unwrap()));
        ok.iter().filter_map(|r| self.space.point_of(&r.recipe).ok()).collect()
    }

    /// Compiles `p` through the verifier: its program's fingerprint and its features.
    fn lower(&mut self, p: &Point) -> Result<Lowered, String> {
        if let Some(l) = self.lowered.get(p) {
            return l.clone();
        }
        let knobs = self.space.knobs(p);
        let l = self.compile(knobs, Stage::Verify).map(|a| {
            let mut features = loop_features(&a.module, self.target);
            features.extend(KNOBS.iter().map(|s| (1.0 + knobs.get(s.knob) as f64).log2()));
            Lowered { program: sha256(print_l1(&a.module).as_bytes()), features }
        });
        self.lowered.insert(p.clone(), l.clone());
        l
    }

    fn compile(&self, knobs: Knobs, until: Stage) -> Result<driver::Artifact, String> {
        let options = CompileOptions {
            knobs: Some(knobs),
            backend: if self.opts.gpu { BackendChoice::Gpu } else { BackendChoice::Cpu },
            until,
            ..CompileOptions::default()
        };
        let sources = Sources { graph: Some(&self.w.source), module: None };
        driver::compile(Program::Graph(&self.w.graph), sources, self.target, &options).map_err(|f| {
            let diags: Vec<String> = f.diagnostics.iter().map(|d| d.to_string()).collect();
            format!("the {} stage failed: {}", f.stage, diags.join("; "))
        })
    }

    /// Compiles and loads `p` into this process, checking its outputs.
    fn build(&self, p: &Point) -> Result<Loaded, (Outcome, String)> {
        let Bench::Here(bench) = &self.bench else { unreachable!("only a tune measured here loads points") };
        let a = self.compile(self.space.knobs(p), Stage::Toolchain).map_err(|e| (Outcome::Compile, e))?;
        bench.load(&a).map_err(|r| (r.outcome, r.error))
    }

    /// Measures the points of `batch` (each with its program's fingerprint) and records each:
    /// here, one at a time against the best so far; elsewhere, together, against the default.
    fn measure_batch(
        &mut self,
        db: &mut Db,
        batch: Vec<(Point, String)>,
        total: usize,
        progress: &mut dyn FnMut(&Event),
    ) -> Result<(), String> {
        let answers = match &mut self.bench {
            Bench::Here(_) => None,
            Bench::Remote { .. } => {
                // The loop programs the points lower to, as the worker compiles them.
                let mut programs = Vec::new();
                for (p, _) in &batch {
                    let a = self.compile(self.space.knobs(p), Stage::Verify)?;
                    programs.push(print_l1(&a.module));
                }
                let Bench::Remote { remote, .. } = &mut self.bench else { unreachable!() };
                let answers = remote.measure(self.w, &programs)?;
                if answers.len() != batch.len() {
                    return Err(format!("{} candidates sent, {} answers", batch.len(), answers.len()));
                }
                Some(answers)
            }
        };
        match answers {
            None => {
                for (p, program) in batch {
                    let timed = self.time_here(&p);
                    self.record(db, &p, &program, timed, total, progress)?;
                }
            }
            Some(answers) => {
                for ((p, program), answer) in batch.into_iter().zip(answers) {
                    let timed = answer.map(|a| self.on_scale(a));
                    self.record(db, &p, &program, timed, total, progress)?;
                }
            }
        }
        Ok(())
    }

    /// Compiles, loads and times `p` in this process against the best so far: the point, its
    /// time on the tune's scale and its ratio to the best.
    fn time_here(&self, p: &Point) -> Result<(Option<Loaded>, f64, f64), (Outcome, String)> {
        let Bench::Here(bench) = &self.bench else { unreachable!("only a tune measured here times points") };
        let loaded = self.build(p)?;
        let (ms, paired) = bench
            .time(&loaded, self.best.as_ref().and_then(|b| b.loaded.as_ref()))
            .map_err(|e| (Outcome::Run, e))?;
        // On the tune's scale: the ratio to the best, times the best's time.
        let (time_ms, ratio) = match (&self.best, paired) {
            (Some(b), Some(bm)) => (ms / bm * b.time_ms, ms / bm),
            _ => (ms, 1.0),
        };
        Ok((Some(loaded), time_ms, ratio))
    }

    /// A remote answer on the tune's scale: its ratio to the default times the default's time
    /// as first measured.
    fn on_scale(&mut self, a: Paired) -> (Option<Loaded>, f64, f64) {
        let Bench::Remote { scale, .. } = &mut self.bench else {
            unreachable!("only a remote tune has answers")
        };
        let scale = *scale.get_or_insert(a.default_ms);
        (None, a.ratio * scale, a.ratio)
    }

    /// Records one measured candidate (`timed`: the point as loaded here, its time on the
    /// tune's scale and its ratio) and makes it the best when it is faster.
    fn record(
        &mut self,
        db: &mut Db,
        p: &Point,
        program: &str,
        timed: Result<(Option<Loaded>, f64, f64), (Outcome, String)>,
        total: usize,
        progress: &mut dyn FnMut(&Event),
    ) -> Result<(), String> {
        self.trials += 1;
        let recipe = self.space.recipe(p);
        let mut record = Record {
            graph: self.w.name.clone(),
            graph_sha256: self.graph_sha256.clone(),
            device: self.device.clone(),
            recipe: recipe.clone(),
            program_sha256: program.to_string(),
            outcome: Outcome::Ok,
            time_ms: None,
            vs_best: None,
            error: None,
            trial: self.trials,
        };
        match timed {
            Ok((loaded, time_ms, ratio)) => {
                record.time_ms = Some(time_ms);
                record.vs_best = Some(ratio);
                if self.default_ms.is_none() && *p == self.space.default_point() {
                    self.default_ms = Some(time_ms);
                }
                if self.best.as_ref().is_none_or(|b| time_ms < b.time_ms) {
                    self.best = Some(Best { loaded, time_ms, recipe });
                }
            }
            Err((outcome, e)) => {
                record.outcome = outcome;
                record.error = Some(e);
            }
        }
        *self.summary.measured.entry(record.outcome).or_default() += 1;
        let event = Event {
            workload: self.w.name.clone(),
            trial: self.trials,
            trials: total,
            outcome: record.outcome,
            time_ms: record.time_ms,
            best_ms: self.best_ms(),
            default_ms: self.default_ms,
        };
        db.append(record)?;
        progress(&event);
        Ok(())
    }

    /// Fits the model on the database's correct records of this graph: the target is the log of
    /// a record's time over the fastest of its device, so records of several devices share one
    /// scale.
    fn fit(&mut self, db: &Db) {
        let records: Vec<Record> = db
            .of_graph(&self.graph_sha256)
            .filter(|r| r.outcome == Outcome::Ok && r.time_ms.is_some())
            .cloned()
            .collect();
        let mut scale: HashMap<&str, f64> = HashMap::new();
        for r in &records {
            let t = r.time_ms.unwrap();
            let e = scale.entry(r.device.as_str()).or_insert(t);
            *e = e.min(t);
        }
        let mut rows = Vec::new();
        let mut targets = Vec::new();
        for r in &records {
            let Ok(p) = self.space.point_of(&r.recipe) else { continue };
            let Ok(l) = self.lower(&p) else { continue };
            rows.push(l.features);
            targets.push((r.time_ms.unwrap() / scale[r.device.as_str()]).ln());
        }
        self.model =
            if rows.len() >= 4 { Model::fit(&rows, &targets, Params::default()) } else { Model::default() };
    }
}

/// The SHA-256 of a graph's text, as printed (its identity in the database).
pub fn graph_sha256(g: &ekb_ir::l0::Graph) -> String {
    sha256(ekb_ir::l0::print::print(g).as_bytes())
}
