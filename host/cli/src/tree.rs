//! `ekb tree`: read an agent run's candidate tree (`ekb_leka::tree`): the tree as indented
//! text, the path from the root to a node with each edit's gain, the diff of two nodes'
//! candidates, and a node's candidate exported as a candidate folder that `ekb eval` reads.
//!
//! Nothing here writes to the tree; errors name the node or run asked for and what exists.

use ekb_leka::tree::{Attribution, BatchRecord, Confirmation, Level, Node, NodeId, RunRecord, Tree};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

/// Inspect an agent run's candidate tree: every attempt, its outcome, and the run's answer.
#[derive(clap::Args)]
#[command(
    long_about = "Inspect an agent run's candidate tree.\n\n\
Every attempt of every level's agent is a node: its parent, its level (root, l0 graph, l1 loop \
program, l2 kernel source), the agent that made it, its edit (a diff against the parent's \
candidate), the whole candidate, and the evaluation's outcome (compiled, correct, the failure \
with its evidence, the paired speedup over the baseline with its interval). A node is verified \
when it is correct and its speedup is stable. A run's answer is the verified node with the highest \
speedup (the earliest of equals) among those measured above the start and not rejected by a \
confirmation, else the start; the fastest verified node is named too where it is not the \
answer. Each node names the batch that measured it and the load \
average of the machine when the batch started; a run's answer is measured again against the \
start at the end of the run, and each such confirmation (confirmed or rejected) is listed under \
its node. The tree is a SQLite file, `tree.sqlite` in the run folder; docs/agent.md describes \
its tables.",
    after_help = "Examples:\n  \
ekb tree runs/agent-1 show                  the tree, one line per node, the answer marked\n  \
ekb tree runs/agent-1 show --json           every node with its outcome, as JSON\n  \
ekb tree runs/agent-1 path 12               root to node 12, each edit's gain, the gain per level\n  \
ekb tree runs/agent-1 diff 3 12             what changed between the candidates of nodes 3 and 12\n  \
ekb tree runs/agent-1 profile 12            the profiling agent's report on node 12\n  \
ekb tree runs/agent-1 export 12 --out best  node 12 as best/TASK/BACKEND/sample-0/...\n  \
ekb eval --candidates best --out runs/best-again   then measure it again"
)]
pub struct Args {
    /// An agent run's folder (holding `tree.sqlite`), or the database file itself.
    tree: PathBuf,
    #[command(subcommand)]
    command: TreeCommand,
}

#[derive(clap::Subcommand)]
enum TreeCommand {
    /// The tree as indented text: id, level, agent, outcome, the edit in short, the batch and
    /// its load; each run's answer marked `<- answer` (and its fastest verified node, where
    /// that is another, `<- fastest verified`), the confirmations under their node.
    Show {
        /// Only this run (a database may hold several).
        #[arg(long)]
        run: Option<String>,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// The nodes from the root to NODE, each with its gain over the last verified node before
    /// it, and the gain of each level: factors that multiply to the speedup over the root.
    Path {
        /// The node's id (the first number of each `show` line).
        node: NodeId,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// The unified diff from node A's candidate to node B's.
    Diff {
        /// The node diffed from.
        a: NodeId,
        /// The node diffed to.
        b: NodeId,
    },
    /// The profiling agent's report on NODE: per-kernel times and counts, and the findings
    /// routed to the levels (what the loop acted on when it expanded the node).
    Profile {
        /// The node's id.
        node: NodeId,
    },
    /// Write NODE's candidate as a candidate folder sample, `OUT/TASK/BACKEND/sample-N/`.
    Export {
        /// The node's id.
        node: NodeId,
        /// The candidate folder (created if absent).
        #[arg(long)]
        out: PathBuf,
        /// The sample's number (`ekb eval --samples` reads samples 0 to K-1).
        #[arg(long, default_value_t = 0)]
        sample: u32,
    },
}

pub fn run(args: Args) -> Result<ExitCode, String> {
    let tree = Tree::open_existing(&Tree::locate(&args.tree)).map_err(|e| e.to_string())?;
    match args.command {
        TreeCommand::Show { run, json } => show(&tree, run.as_deref(), json),
        TreeCommand::Path { node, json } => path(&tree, node, json),
        TreeCommand::Diff { a, b } => diff(&tree, a, b),
        TreeCommand::Export { node, out, sample } => export(&tree, node, out, sample),
        TreeCommand::Profile { node } => {
            ekb_leka::profile::of_node(&tree, node).map(|r| print!("{}", r.render()))
        }
    }
    .map_err(|e| e.to_string())?;
    Ok(ExitCode::SUCCESS)
}

/// A node as `show` and `path` print it, in JSON.
#[derive(Serialize)]
struct NodeView<'a> {
    #[serde(flatten)]
    node: &'a Node,
    summary: String,
    depth: usize,
}

#[derive(Serialize)]
struct RunView<'a> {
    #[serde(flatten)]
    run: &'a RunRecord,
    /// The run's answer: what the loop answers with (see `Tree::answer`).
    answer: Option<NodeId>,
    /// The fastest verified node, which may differ where a confirmation rejected it.
    best: Option<NodeId>,
    nodes: Vec<NodeView<'a>>,
    batches: &'a [BatchRecord],
    confirmations: &'a [Confirmation],
}

/// What `show` reads of a run besides its nodes.
struct Measured {
    batches: Vec<BatchRecord>,
    confirmations: Vec<Confirmation>,
}

impl Measured {
    fn of(tree: &Tree, run: &str) -> Result<Measured, ekb_ir::Diagnostic> {
        Ok(Measured { batches: tree.batches(run)?, confirmations: tree.confirmations(run)? })
    }

    /// ` (batch n2-5, load 1.52 0.98 0.77)` for a batch that has a record, else nothing.
    fn batch(&self, name: Option<&str>) -> String {
        let Some(name) = name else { return String::new() };
        match self.batches.iter().find(|b| b.name == name) {
            Some(b) => format!(" (batch {name}, load {})", b.load),
            None => format!(" (batch {name})"),
        }
    }

    /// The lines of node `id`'s confirmations: `confirm: confirmed: 1.31x [1.20, 1.45] over node 1
    /// (batch confirm-n5, load 0.41 0.50 0.52)`.
    fn confirmations(&self, id: NodeId) -> Vec<String> {
        self.confirmations
            .iter()
            .filter(|c| c.node == id)
            .map(|c| format!("confirm: {}{}", c.describe(), self.batch(Some(&c.batch))))
            .collect()
    }
}

/// `1 [root] start: 1.00x verified; start`, and where it was measured.
fn measured_line(node: &Node, m: &Measured) -> String {
    format!("{}{}", line(node), m.batch(node.batch.as_deref()))
}

/// `1 [root] start: 1.00x verified; start`.
fn line(node: &Node) -> String {
    format!(
        "{} [{}] {}: {}; {}",
        node.id,
        node.level.name(),
        node.agent,
        node.describe_outcome(),
        node.edit.summary()
    )
}

fn heading(run: &RunRecord, nodes: usize, marks: &Marks) -> String {
    let s = &run.spec;
    let mut picked = match &marks.answer {
        Some(a) => format!("answer node {} ({})", a.id, a.describe_outcome()),
        None => "no node yet".to_string(),
    };
    match (&marks.best, &marks.answer) {
        (None, _) => picked.push_str(", no verified node yet"),
        (Some(b), Some(a)) if b.id != a.id => {
            picked.push_str(&format!(", fastest verified node {} ({})", b.id, b.describe_outcome()))
        }
        _ => {}
    }
    format!(
        "run {}: {} on {} (target {}), baseline {}, {}; {nodes} node(s), {picked}",
        s.id,
        s.task,
        s.backend,
        s.target,
        s.baseline,
        run.status.name()
    )
}

/// A run's answer (what the loop answers with: verified, measured above the start, not
/// rejected by a confirmation) and its fastest verified node; they differ where the fastest
/// measurement did not hold up.
struct Marks {
    answer: Option<Node>,
    best: Option<Node>,
}

impl Marks {
    fn of(tree: &Tree, run: &str) -> Result<Marks, ekb_ir::Diagnostic> {
        Ok(Marks { answer: tree.answer(run)?, best: tree.best_verified(run)? })
    }

    /// `<- answer`, `<- fastest verified`, or nothing.
    fn mark(&self, id: NodeId) -> &'static str {
        if self.answer.as_ref().is_some_and(|a| a.id == id) {
            "answer"
        } else if self.best.as_ref().is_some_and(|b| b.id == id) {
            "fastest verified"
        } else {
            ""
        }
    }
}

/// The nodes depth first, children in the order they were added, each with its depth.
fn depth_first(nodes: &[Node]) -> Vec<(&Node, usize)> {
    let mut children: BTreeMap<Option<NodeId>, Vec<&Node>> = BTreeMap::new();
    for n in nodes {
        children.entry(n.parent).or_default().push(n);
    }
    let mut out = Vec::new();
    let mut stack: Vec<(&Node, usize)> =
        children.get(&None).into_iter().flatten().rev().map(|n| (*n, 0)).collect();
    while let Some((n, depth)) = stack.pop() {
        out.push((n, depth));
        stack.extend(children.get(&Some(n.id)).into_iter().flatten().rev().map(|c| (*c, depth + 1)));
    }
    out
}

fn show(tree: &Tree, only: Option<&str>, json: bool) -> Result<(), ekb_ir::Diagnostic> {
    let runs = match only {
        Some(id) => vec![tree.run(id)?],
        None => tree.runs()?,
    };
    let mut views = Vec::new();
    let mut all = Vec::new();
    for run in &runs {
        let id = &run.spec.id;
        all.push((tree.nodes(id)?, Marks::of(tree, id)?, Measured::of(tree, id)?));
    }
    for (run, (nodes, marks, measured)) in runs.iter().zip(&all) {
        if json {
            let nodes = depth_first(nodes)
                .into_iter()
                .map(|(node, depth)| NodeView { node, summary: node.edit.summary(), depth })
                .collect();
            let (batches, confirmations) = (&measured.batches, &measured.confirmations);
            let answer = marks.answer.as_ref().map(|a| a.id);
            let best = marks.best.as_ref().map(|b| b.id);
            views.push(RunView { run, answer, best, nodes, batches, confirmations });
            continue;
        }
        println!("{}", heading(run, nodes.len(), marks));
        for (node, depth) in depth_first(nodes) {
            let mark = match marks.mark(node.id) {
                "" => String::new(),
                m => format!("  <- {m}"),
            };
            println!("{}{}{mark}", "  ".repeat(depth + 1), measured_line(node, measured));
            for c in measured.confirmations(node.id) {
                println!("{}{c}", "  ".repeat(depth + 2));
            }
        }
    }
    if json {
        let out = serde_json::json!({ "tree": tree.path().display().to_string(), "runs": views });
        println!("{}", serde_json::to_string_pretty(&out).expect("the tree serialises"));
    } else if runs.is_empty() {
        println!("`{}` holds no run", tree.path().display());
    }
    Ok(())
}

/// `x1.50`, or how an unverified edit's gain is counted.
fn gain_text(a: &Attribution, step: usize) -> String {
    let s = &a.steps[step];
    match s.gain {
        Some(g) if s.folded.is_empty() => format!("gain x{g:.2}"),
        Some(g) => {
            let with: Vec<String> = s.folded.iter().map(|f| f.to_string()).collect();
            format!("gain x{g:.2} (with node(s) {})", with.join(", "))
        }
        None => match a.steps[step..].iter().find(|later| later.gain.is_some()) {
            Some(later) => format!("not verified: its gain counts with node {}", later.node),
            None => "not verified: no gain counted".to_string(),
        },
    }
}

fn path(tree: &Tree, id: NodeId, json: bool) -> Result<(), ekb_ir::Diagnostic> {
    let nodes = tree.path_to(id)?;
    let attribution = tree.attribution(id)?;
    let run = tree.run(&nodes[0].run)?;
    if json {
        let views: Vec<NodeView> = nodes
            .iter()
            .enumerate()
            .map(|(depth, node)| NodeView { node, summary: node.edit.summary(), depth })
            .collect();
        let out = serde_json::json!({ "run": run, "nodes": views, "attribution": attribution });
        println!("{}", serde_json::to_string_pretty(&out).expect("the path serialises"));
        return Ok(());
    }
    let s = &run.spec;
    println!("run {}: {} on {} (target {}), baseline {}", s.id, s.task, s.backend, s.target, s.baseline);
    for (i, node) in nodes.iter().enumerate() {
        let gain = if i == 0 {
            let counted =
                if node.verified_speedup().is_some() { "" } else { " (not verified: counted as 1.00x)" };
            format!("the start{counted}")
        } else {
            gain_text(&attribution, i - 1)
        };
        println!("  {}  | {gain}", line(node));
    }
    let levels: Vec<String> = attribution
        .per_level
        .iter()
        .filter(|(l, _)| **l != Level::Root)
        .map(|(l, f)| format!("{} x{f:.2}", l.name()))
        .collect();
    println!(
        "per level: {} = x{:.2} over the root ({:.2}x), {:.2}x over the baseline",
        if levels.is_empty() { "no edit".to_string() } else { levels.join(", ") },
        attribution.total,
        attribution.root_speedup,
        attribution.final_speedup
    );
    Ok(())
}

fn diff(tree: &Tree, a: NodeId, b: NodeId) -> Result<(), ekb_ir::Diagnostic> {
    let text =
        ekb_leka::tree::diff::unified(&tree.files(a)?, &tree.files(b)?, &a.to_string(), &b.to_string());
    if text.is_empty() {
        eprintln!("nodes {a} and {b} have the same candidate");
    }
    print!("{text}");
    Ok(())
}

fn export(tree: &Tree, id: NodeId, out: PathBuf, sample: u32) -> Result<(), ekb_ir::Diagnostic> {
    let dir = tree.export(id, &out, sample)?;
    let run = tree.run(&tree.node(id)?.run)?;
    println!("{}", dir.display());
    eprintln!(
        "node {id} written; measure it with: ekb eval {} --backend {} --candidates {}{}",
        run.spec.task,
        run.spec.backend,
        out.display(),
        if sample > 0 { format!(" --samples {}", sample + 1) } else { String::new() }
    );
    Ok(())
}

/// The candidate tree of the agent run in `dir` as section `n` of the HTML report: per run, its
/// heading and its nodes nested by parent, each with its outcome and edit, the answer marked,
/// the rationale unfolding under it.
pub fn html_section(dir: &std::path::Path, n: usize) -> Result<ekb_eval::report::html::Extra, String> {
    use ekb_eval::report::table::escape;
    let tree = Tree::open_existing(&Tree::locate(dir)).map_err(|d| d.to_string())?;
    let mut body = String::new();
    for run in tree.runs().map_err(|d| d.to_string())? {
        let nodes = tree.nodes(&run.spec.id).map_err(|d| d.to_string())?;
        let marks = Marks::of(&tree, &run.spec.id).map_err(|d| d.to_string())?;
        let measured = Measured::of(&tree, &run.spec.id).map_err(|d| d.to_string())?;
        body.push_str(&format!("<h3>{}</h3>\n", escape(&heading(&run, nodes.len(), &marks))));
        let mut depth_now = 0;
        body.push_str("<ul class=\"tree\">\n");
        for (node, depth) in depth_first(&nodes) {
            while depth_now < depth {
                body.push_str("<ul>\n");
                depth_now += 1;
            }
            while depth_now > depth {
                body.push_str("</ul>\n");
                depth_now -= 1;
            }
            let mark = match marks.mark(node.id) {
                "" => String::new(),
                m => format!(" <strong>&larr; {m}</strong>"),
            };
            let confirmations: String = measured
                .confirmations(node.id)
                .iter()
                .map(|c| format!("<ul><li><em>{}</em></li></ul>", escape(c)))
                .collect();
            body.push_str(&format!(
                "<li><details><summary>{}{mark}</summary><p>{}</p></details>{confirmations}</li>\n",
                escape(&measured_line(node, &measured)),
                escape(&node.rationale)
            ));
        }
        while depth_now > 0 {
            body.push_str("</ul>\n");
            depth_now -= 1;
        }
        body.push_str("</ul>\n");
    }
    Ok(ekb_eval::report::html::Extra {
        id: format!("tree-{n}"),
        title: format!("Candidate tree ({})", dir.display()),
        body,
    })
}
