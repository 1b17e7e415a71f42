//! `ekb tasks`: the benchmark task suite under `tasks/` — counts, listing, one task in detail,
//! validation, reference I/O export, and canonical formatting of task files.
//!
//! The work is done by `ekb_eval::tasks`; this file parses arguments and prints. Every
//! subcommand has `--json`; broken task files are rendered diagnostics on stderr and exit 1.

use crate::files;
use ekb_eval::tasks::validate::{self, Options, TaskReport, TwinChecks};
use ekb_eval::tasks::{self, cost, export, table, Backend, Domain, Filter, Suite, Task};
use ekb_ir::diag::did_you_mean;
use ekb_ir::l0::print::init_text;
use ekb_tune::Workload;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The benchmark task suite: counts, list, show, validate, export reference I/O.
#[derive(clap::Args)]
#[command(after_help = "Examples:\n  \
ekb tasks                                    counts by level x backend x domain\n  \
ekb tasks list --domain robotics conv        tasks of a domain whose name contains `conv`\n  \
ekb tasks show conv2d_dw3x3_mobilenetv2      metadata, shapes, FLOPs, bytes, peak memory, graph\n  \
ekb tasks validate                           every task: references on 3 seeds, twins\n  \
ekb tasks export-io relu6_mobilenetv2_expand --seed 1 --out io/\n  \
ekb tasks memory --level 3                   per graph: unplanned and planned peak memory, ratio\n  \
ekb tasks list --subset tasks/agent-subset.txt --backend cpu   the agent subset's CPU instances")]
pub struct Args {
    #[command(subcommand)]
    command: Option<Cmd>,
    /// The task folder (default: the nearest `tasks/` with a `level1/` folder, from here up).
    #[arg(long, global = true)]
    dir: Option<PathBuf>,
    /// Print one JSON value instead of text.
    #[arg(long, global = true)]
    json: bool,
}

#[derive(clap::Subcommand)]
enum Cmd {
    /// Counts of tasks and instances by level x backend x domain (the default).
    Table,
    /// The tasks, filtered.
    List(Select),
    /// One task: metadata, inputs, parameters, outputs, cost, peak memory, graph.
    Show(ShowArgs),
    /// Check every selected task against the suite's rules (exit 1 on any failure).
    Validate(ValidateArgs),
    /// Write a task's inputs, parameters and reference outputs on one seed as .npy files.
    ExportIo(ExportArgs),
    /// Rewrite task files in canonical form (header and graph).
    Fmt(FmtArgs),
    /// Per task: peak memory with every temp apart and with the memory plan, their ratio, and
    /// the geometric mean of the ratios.
    Memory(crate::tasks_memory::MemoryArgs),
    /// The agent subset by its rule (12 Level-1, 8 Level-2 and 3 Level-3 instances per backend,
    /// spread round-robin over the families), as the `tasks/agent-subset.txt` it must equal.
    Subset,
}

/// Which tasks.
#[derive(clap::Args)]
pub struct Select {
    /// Name pattern: a glob with `*`/`?`, otherwise a substring.
    pub pattern: Option<String>,
    /// Only this level (1, 2 or 3).
    #[arg(long)]
    pub level: Option<u8>,
    /// Only tasks of this domain (mobile, robotics, aiot).
    #[arg(long)]
    pub domain: Option<String>,
    /// Only tasks with an instance on this backend (cpu, cuda, opencl).
    #[arg(long)]
    pub backend: Option<String>,
    /// Only this family (conv, matmul, ...).
    #[arg(long)]
    pub family: Option<String>,
    /// Only the instances a subset file lists (`TASK BACKEND` lines), such as the agent subset
    /// `tasks/agent-subset.txt`.
    #[arg(long, value_name = "FILE")]
    pub subset: Option<PathBuf>,
}

impl Select {
    /// Whether any criterion was given.
    pub fn given(&self) -> bool {
        self.pattern.is_some()
            || self.level.is_some()
            || self.domain.is_some()
            || self.backend.is_some()
            || self.family.is_some()
            || self.subset.is_some()
    }
}

#[derive(clap::Args)]
struct ShowArgs {
    /// The task's name.
    name: String,
    /// Target profile for the peak memory of the default lowering.
    #[arg(long, default_value = "host")]
    target: String,
}

#[derive(clap::Args)]
struct ValidateArgs {
    #[command(flatten)]
    select: Select,
    /// Tasks validated at once (default: the number of cores).
    #[arg(long)]
    jobs: Option<usize>,
    /// Skip the PyTorch twin checks (static and torch).
    #[arg(long)]
    skip_twins: bool,
}

#[derive(clap::Args)]
struct ExportArgs {
    /// The task's name.
    name: String,
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Output folder (created if needed).
    #[arg(long)]
    out: PathBuf,
}

#[derive(clap::Args)]
struct FmtArgs {
    /// Name pattern of the files to format (default: all).
    pattern: Option<String>,
    /// Only report files that are not in canonical form (exit 1 if any).
    #[arg(long)]
    check: bool,
}

fn root(dir: &Option<PathBuf>) -> Result<PathBuf, String> {
    match dir {
        Some(d) => Ok(d.clone()),
        None => {
            let cwd = std::env::current_dir().map_err(|e| format!("error: no current directory: {e}"))?;
            tasks::find_root(&cwd).ok_or_else(|| {
                "error: no task folder found: no `tasks/level1/` here or in a parent folder\n  = hint: pass `--dir PATH/TO/tasks`".to_string()
            })
        }
    }
}

/// Loads the suite; broken task files are printed on stderr and make the command fail.
pub fn load(dir: &Option<PathBuf>) -> Result<(Suite, bool), String> {
    let suite = tasks::load_suite(&root(dir)?).map_err(|d| d.to_string())?;
    for d in &suite.errors {
        eprint!("{d}");
    }
    let broken = !suite.errors.is_empty();
    if broken {
        eprintln!("error: {} problem(s) in task files", suite.errors.len());
    }
    Ok((suite, broken))
}

fn parse_name<T: Copy>(kind: &str, s: &str, all: &[T], name: fn(T) -> &'static str) -> Result<T, String> {
    all.iter().copied().find(|x| name(*x) == s).ok_or_else(|| {
        let names: Vec<&str> = all.iter().map(|x| name(*x)).collect();
        let hint =
            did_you_mean(s, names.iter().copied()).map(|h| format!("\n  = hint: {h}")).unwrap_or_default();
        format!("error: unknown {kind} `{s}`\n  = expected: one of {}{hint}", names.join(", "))
    })
}

pub fn filter(s: &Select) -> Result<Filter, String> {
    Ok(Filter {
        level: s.level,
        domain: s
            .domain
            .as_deref()
            .map(|d| parse_name("domain", d, &Domain::ALL, Domain::name))
            .transpose()?,
        backend: s
            .backend
            .as_deref()
            .map(|b| parse_name("backend", b, &Backend::ALL, Backend::name))
            .transpose()?,
        family: s.family.clone(),
        pattern: s.pattern.clone(),
        instances: s
            .subset
            .as_deref()
            .map(|f| {
                tasks::subset::read(f).map_err(|ds| ds.iter().map(|d| d.to_string()).collect::<String>())
            })
            .transpose()?,
    })
}

/// The tasks `f` selects in `suite`; an error when its subset names instances the suite does
/// not have.
pub fn select<'a>(f: &Filter, suite: &'a Suite) -> Result<Vec<&'a Task>, String> {
    let missing = f.instances.as_deref().map(|list| tasks::subset::missing(list, suite)).unwrap_or_default();
    if !missing.is_empty() {
        let listed: String = missing.iter().map(|d| d.to_string()).collect();
        return Err(format!("{listed}error: the subset names instances the suite does not have"));
    }
    Ok(suite.select(f))
}

/// The CPU instances `s` selects, as workloads checked at each task's tolerances; `--backend`
/// other than `cpu` is refused, and broken task files are an error (an empty selection is not:
/// the caller says what else the pattern could have named).
pub fn cpu_workloads(s: &Select, dir: &Option<PathBuf>) -> Result<Vec<Workload>, String> {
    Ok(cpu_tasks(s, dir)?.iter().map(workload).collect())
}

/// The tasks with a CPU instance that `s` selects (what [`cpu_workloads`] tunes).
pub fn cpu_tasks(s: &Select, dir: &Option<PathBuf>) -> Result<Vec<Task>, String> {
    match backend_tasks(s, dir)? {
        (Backend::Cpu, tasks) => Ok(tasks),
        _ => Err(
            "error: the workloads are CPU instances, measured on this machine\n  = hint: drop `--backend`"
                .into(),
        ),
    }
}

/// The backend `s` names (the CPU when it names none) and the tasks with an instance on it that
/// `s` selects.
pub fn backend_tasks(s: &Select, dir: &Option<PathBuf>) -> Result<(Backend, Vec<Task>), String> {
    let mut f = filter(s)?;
    let backend = *f.backend.get_or_insert(Backend::Cpu);
    let (suite, broken) = load(dir)?;
    if broken {
        return Err("error: fix the task files above first".into());
    }
    Ok((backend, select(&f, &suite)?.into_iter().cloned().collect()))
}

/// A task as a workload of the tuner, checked at the task's tolerances.
pub fn workload(t: &Task) -> Workload {
    let mut w = Workload::new(t.name.clone(), t.source.clone(), t.graph.clone());
    w.tolerances = t.graph.outputs.iter().map(|o| t.tolerance(o.ty.dtype)).collect();
    w
}

pub(crate) fn status(broken: bool) -> ExitCode {
    if broken {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

pub fn run(args: Args) -> Result<ExitCode, String> {
    match args.command.unwrap_or(Cmd::Table) {
        Cmd::Table => run_table(&args.dir, args.json),
        Cmd::List(s) => run_list(&args.dir, &s, args.json),
        Cmd::Show(s) => run_show(&args.dir, &s, args.json),
        Cmd::Validate(v) => run_validate(&args.dir, &v, args.json),
        Cmd::ExportIo(e) => run_export(&args.dir, &e, args.json),
        Cmd::Fmt(f) => run_fmt(&args.dir, &f, args.json),
        Cmd::Memory(m) => crate::tasks_memory::run(&args.dir, &m, args.json),
        Cmd::Subset => run_subset(&args.dir),
    }
}

fn run_subset(dir: &Option<PathBuf>) -> Result<ExitCode, String> {
    let (suite, broken) = load(dir)?;
    let list = tasks::subset::agent_subset(&suite);
    let about = format!(
        "The agent subset: {} instances, chosen by `ekb tasks subset` (docs/agent.md, \"The agent subset\").\n\
         Per backend, 12 Level-1, 8 Level-2 and 3 Level-3 instances, round-robin over the operator families.",
        list.len()
    );
    print!("{}", tasks::subset::render(&list, &about));
    Ok(status(broken))
}

fn run_table(dir: &Option<PathBuf>, json: bool) -> Result<ExitCode, String> {
    let (suite, broken) = load(dir)?;
    let all: Vec<&Task> = suite.tasks.iter().collect();
    let c = table::counts(&all);
    if json {
        println!("{}", serde_json::to_string_pretty(&c).expect("counts serialise"));
    } else {
        print!("{}", table::render(&c));
    }
    Ok(status(broken))
}

/// One task as `list --json` and `show --json` print it.
#[derive(Serialize)]
struct TaskInfo<'a> {
    name: &'a str,
    level: u8,
    family: &'a str,
    domains: &'a [Domain],
    backends: Vec<Backend>,
    provenance: &'a tasks::Provenance,
    atol: f64,
    rtol: f64,
    tolerance_reason: Option<&'a str>,
    notes: &'a str,
    file: String,
    twin: String,
    flops: u64,
    min_bytes: u64,
}

fn info(t: &Task) -> TaskInfo<'_> {
    let c = cost::estimate(&t.graph);
    let tol = t.tolerance(ekb_ir::DType::F32);
    TaskInfo {
        name: &t.name,
        level: t.meta.level,
        family: &t.meta.family,
        domains: &t.meta.domains,
        backends: t.meta.backends(),
        provenance: &t.meta.provenance,
        atol: tol.atol,
        rtol: tol.rtol,
        tolerance_reason: t.meta.tolerance.as_ref().and_then(|x| x.reason.as_deref()),
        notes: &t.meta.notes,
        file: t.path.display().to_string(),
        twin: t.twin.display().to_string(),
        flops: c.flops,
        min_bytes: c.min_bytes,
    }
}

fn run_list(dir: &Option<PathBuf>, s: &Select, json: bool) -> Result<ExitCode, String> {
    let f = filter(s)?;
    let (suite, broken) = load(dir)?;
    let sel = select(&f, &suite)?;
    if json {
        let infos: Vec<TaskInfo> = sel.iter().map(|t| info(t)).collect();
        println!("{}", serde_json::to_string_pretty(&infos).expect("tasks serialise"));
        return Ok(status(broken));
    }
    let width = sel.iter().map(|t| t.name.len()).max().unwrap_or(4).max(4);
    println!(
        "{:<width$}  lvl  {:<10} {:<18} {:>9} {:>8}  model / layer",
        "name", "family", "backends", "MFLOP", "MB"
    );
    let mut instances = 0;
    for t in &sel {
        let c = cost::estimate(&t.graph);
        let backends: Vec<&str> = t.meta.backends().iter().map(|b| b.name()).collect();
        instances += backends.len();
        println!(
            "{:<width$}  {:>3}  {:<10} {:<18} {:>9.2} {:>8.2}  {} / {}",
            t.name,
            t.meta.level,
            t.meta.family,
            backends.join(","),
            c.flops as f64 / 1e6,
            c.min_bytes as f64 / 1e6,
            t.meta.provenance.model,
            t.meta.provenance.layer
        );
    }
    println!("{} task(s), {instances} instance(s)", sel.len());
    Ok(status(broken))
}

#[derive(Serialize)]
struct Decl {
    name: String,
    r#type: String,
    init: Option<String>,
}

#[derive(Serialize)]
struct Show<'a> {
    #[serde(flatten)]
    info: TaskInfo<'a>,
    inputs: Vec<Decl>,
    params: Vec<Decl>,
    outputs: Vec<Decl>,
    intensity: f64,
    edge_roofline_seconds: f64,
    target: String,
    peak_memory_bytes: Option<u64>,
    peak_memory_error: Option<String>,
    graph: &'a str,
}

fn run_show(dir: &Option<PathBuf>, s: &ShowArgs, json: bool) -> Result<ExitCode, String> {
    let target = crate::source::target(&s.target)?;
    let (suite, broken) = load(dir)?;
    let t = suite.get(&s.name).map_err(|d| d.to_string())?;
    let c = cost::estimate(&t.graph);
    let rules = validate::Rules::default();
    let (peak, peak_err) = match cost::default_peak_memory(&t.graph, &target) {
        Ok(b) => (Some(b), None),
        Err(d) => (None, Some(d.to_string())),
    };
    let decl = |d: &ekb_ir::l0::TensorDecl| Decl {
        name: d.name.clone(),
        r#type: d.ty.to_string(),
        init: Some(init_text(&d.init)),
    };
    let show = Show {
        info: info(t),
        inputs: t.graph.inputs.iter().map(decl).collect(),
        params: t.graph.params.iter().map(decl).collect(),
        outputs: t
            .graph
            .outputs
            .iter()
            .map(|o| Decl { name: o.name.clone(), r#type: o.ty.to_string(), init: None })
            .collect(),
        intensity: c.intensity(),
        edge_roofline_seconds: c.roofline_seconds(rules.edge_flops_per_s, rules.edge_bytes_per_s),
        target: target.name.clone(),
        peak_memory_bytes: peak,
        peak_memory_error: peak_err,
        graph: t.graph_text(),
    };
    if json {
        println!("{}", serde_json::to_string_pretty(&show).expect("show serialises"));
        return Ok(status(broken));
    }
    let m = &t.meta;
    println!("task {} (level {}, family {})", t.name, m.level, m.family);
    println!("files: {} (twin {})", t.path.display(), t.twin.display());
    let doms: Vec<String> =
        m.domains.iter().map(|d| format!("{} ({}) -> {}", d.name(), d.title(), d.backend())).collect();
    println!("domains: {}", doms.join("; "));
    let p = &m.provenance;
    println!("provenance: model {}; layer {}; module {}", p.model, p.layer, p.module);
    if let Some(src) = &p.source {
        println!("source: {src}");
    }
    let tol = t.tolerance(ekb_ir::DType::F32);
    match &m.tolerance {
        Some(x) => println!(
            "tolerance (f32): atol {:e}, rtol {:e}{}",
            tol.atol,
            tol.rtol,
            x.reason.as_ref().map(|r| format!(" — {r}")).unwrap_or_default()
        ),
        None => println!("tolerance (f32): atol {:e}, rtol {:e} (protocol default)", tol.atol, tol.rtol),
    }
    if t.graph.outputs.iter().any(|o| o.ty.dtype == ekb_ir::DType::F16) {
        let h = t.tolerance(ekb_ir::DType::F16);
        println!(
            "tolerance (f16 outputs): atol {:e}, rtol {:e} (at least one f16 step relative)",
            h.atol, h.rtol
        );
    }
    if !m.notes.is_empty() {
        println!("notes: {}", m.notes);
    }
    for (label, ds) in [("input", &show.inputs), ("param", &show.params), ("output", &show.outputs)] {
        for d in ds {
            let init = d.init.as_ref().map(|i| format!(" = {i}")).unwrap_or_default();
            println!("  {label:<6} {}: {}{init}", d.name, d.r#type);
        }
    }
    println!(
        "cost: {:.3} MFLOP, {:.3} MB minimum traffic, {:.2} FLOP/byte; edge-CPU roofline {:.3} ms ({:.0} GFLOP/s, {:.0} GB/s nominal)",
        c.flops as f64 / 1e6,
        c.min_bytes as f64 / 1e6,
        show.intensity,
        show.edge_roofline_seconds * 1e3,
        rules.edge_flops_per_s / 1e9,
        rules.edge_bytes_per_s / 1e9
    );
    match (&show.peak_memory_bytes, &show.peak_memory_error) {
        (Some(b), _) => println!(
            "peak memory (default CPU lowering, target {}): {b} bytes ({:.2} MB)",
            show.target,
            *b as f64 / 1e6
        ),
        (None, Some(e)) => println!("peak memory: the default lowering failed:\n{e}"),
        _ => {}
    }
    println!("graph:\n{}", show.graph.trim_end());
    Ok(status(broken))
}

fn report_text(n: usize, total: usize, r: &TaskReport) -> String {
    let w = total.to_string().len();
    let mut s = format!(
        "[{n:>w$}/{total}] {} {}  ({:.2} s, {:.1} MFLOP, {:.2} MB)",
        if r.ok { "ok  " } else { "FAIL" },
        r.name,
        r.interp_seconds,
        r.cost.flops as f64 / 1e6,
        r.cost.min_bytes as f64 / 1e6
    );
    for p in &r.problems {
        s.push_str(&format!("\n      {}", p.replace('\n', "\n      ")));
    }
    s
}

fn run_validate(dir: &Option<PathBuf>, v: &ValidateArgs, json: bool) -> Result<ExitCode, String> {
    let f = filter(&v.select)?;
    let (suite, broken) = load(dir)?;
    let sel = select(&f, &suite)?;
    if sel.is_empty() && !broken {
        return Err("error: no task matches the selection".into());
    }
    let jobs = v.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let opts = Options {
        rules: validate::Rules::default(),
        jobs,
        twins: if v.skip_twins { TwinChecks::Skip } else { TwinChecks::Auto },
    };
    let start = std::time::Instant::now();
    let report = validate::validate_suite(&sel, &opts, &|n, total, r| {
        // Progress goes to stderr under --json, so stdout stays one JSON value.
        if json {
            eprintln!("{}", report_text(n, total, r));
        } else {
            println!("{}", report_text(n, total, r));
        }
    });
    let failed = report.tasks.iter().filter(|r| !r.ok).count();
    if json {
        println!("{}", serde_json::to_string_pretty(&report).expect("report serialises"));
    } else {
        // The torch run adds problems after the progress lines: list them again.
        for r in report.tasks.iter().filter(|r| !r.ok) {
            if r.problems.iter().any(|p| p.starts_with("torch:")) {
                println!("{}", report_text(0, 0, r));
            }
        }
        println!(
            "{} task(s) validated in {:.1} s: {} ok, {failed} failed{}; twins: static {}, torch {}",
            report.tasks.len(),
            start.elapsed().as_secs_f64(),
            report.tasks.len() - failed,
            if broken { format!(", {} broken file problem(s)", suite.errors.len()) } else { String::new() },
            report.twin_static,
            report.twin_torch
        );
    }
    Ok(status(broken || !report.ok))
}

fn run_export(dir: &Option<PathBuf>, e: &ExportArgs, json: bool) -> Result<ExitCode, String> {
    let (suite, broken) = load(dir)?;
    let t = suite.get(&e.name).map_err(|d| d.to_string())?;
    let m = export::export_io(t, e.seed, &e.out)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&m).expect("manifest serialises"));
    } else {
        let n = m.inputs.len() + m.params.len() + m.outputs.len();
        println!("{}: seed {}: wrote {n} .npy files and io.json to {}", m.task, m.seed, e.out.display());
    }
    Ok(status(broken))
}

#[derive(Serialize)]
struct FmtResult {
    file: String,
    changed: bool,
}

fn run_fmt(dir: &Option<PathBuf>, f: &FmtArgs, json: bool) -> Result<ExitCode, String> {
    let root = root(dir)?;
    let files = tasks::task_files(&root).map_err(|d| d.to_string())?;
    let mut results = Vec::new();
    let mut failed = false;
    for path in files.iter().filter(|p| {
        let stem = p.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        f.pattern.as_ref().is_none_or(|pat| tasks::name_matches(pat, &stem))
    }) {
        let text = read(path)?;
        match tasks::formatted(&text, &path.display().to_string()) {
            Err(ds) => {
                failed = true;
                for d in ds {
                    eprint!("{d}");
                }
            }
            Ok(want) => {
                let changed = want != text;
                if changed && !f.check {
                    files::write(path, want.as_bytes())?;
                }
                failed |= changed && f.check;
                results.push(FmtResult { file: path.display().to_string(), changed });
            }
        }
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&results).expect("results serialise"));
    } else {
        for r in results.iter().filter(|r| r.changed) {
            println!("{} {}", if f.check { "not canonical:" } else { "formatted:" }, r.file);
        }
        println!("{} file(s), {} changed", results.len(), results.iter().filter(|r| r.changed).count());
    }
    Ok(status(failed))
}

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("error: cannot read `{}`: {e}", path.display()))
}
