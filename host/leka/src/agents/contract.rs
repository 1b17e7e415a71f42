//! The level contracts, enforced: what an agent of each level may change, and what it must keep.
//!
//! | level | may change | must keep |
//! | --- | --- | --- |
//! | L0 | the graph's nodes, fusion groups and graph passes | the task's signature (inputs, parameters with their data, outputs) |
//! | L1 | the default schedule's knobs and the schedule trace | the graph; every step is a primitive that proves its own legality |
//! | L2 | the source of kernels the program has, in the backend's language | the loop program: buffers, plan, launch geometry |
//!
//! An edit of another level's layer is refused (an L1 agent that writes a graph changes what
//! the program computes, which only the L0 agent may), as is an edit that breaks what its level
//! must keep. The later layers are carried onto an earlier level's new program
//! (`Layers::carry`), and what could not be carried is said.
//!
//! What must stay true: [`apply`] is the only way an agent's edit becomes a node's layers.

use super::Edit;
use crate::layers::Layers;
use crate::tree::Level;
use ekb_deploy::l2::KernelLang;
use ekb_eval::evaluate::compile::signature_mismatches;
use ekb_eval::tasks::{Backend, Task};
use ekb_ir::l1::Module;
use ekb_ir::{SourceFile, TargetProfile};

/// An edit refused by its level's contract, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation(pub String);

/// What a level's layer is, for messages.
fn layer_of(level: Level) -> &'static str {
    match level {
        Level::Root => "nothing",
        Level::L0 => "the graph (nodes, fusion groups, graph passes)",
        Level::L1 => "the schedule (knobs and trace)",
        Level::L2 => "kernel sources",
        Level::Flat => "the whole program",
    }
}

/// The layers after `agent`'s `edit` of a node whose layers are `parent` and whose program is
/// `module`, with the notes of what could not be carried; or the violation.
pub fn apply(
    agent: Level,
    parent: &Layers,
    module: &Module,
    edit: &Edit,
    task: &Task,
    backend: Backend,
    target: &TargetProfile,
) -> Result<(Layers, Vec<String>), Violation> {
    if edit.level() != agent {
        return Err(Violation(format!(
            "contract: the {} agent may change only {}, and it wrote {}",
            agent.name().to_uppercase(),
            layer_of(agent),
            layer_of(edit.level())
        )));
    }
    match edit {
        Edit::Graph { text, passes } => {
            let src = SourceFile::new("graph.ekir", text.clone());
            // A graph that does not load is the candidate's own failure (syntax), found when it
            // is built; the contract is about what it declares.
            if let Ok(graph) = ekb_ir::l0::check::load(&src) {
                let wrong = signature_mismatches(&task.graph, &graph);
                if !wrong.is_empty() {
                    return Err(Violation(format!(
                        "contract: the L0 agent must keep the task's signature: {}",
                        wrong.join("; ")
                    )));
                }
            }
            let next = Layers { graph: text.clone(), passes: passes.clone(), ..parent.clone() };
            Ok(next.carry(backend, target))
        }
        Edit::Schedule { recipe, rebind, trace } => {
            let next = Layers {
                recipe: recipe.clone(),
                rebind: rebind.clone(),
                trace: trace.clone(),
                ..parent.clone()
            };
            Ok((next, Vec::new()))
        }
        Edit::Kernel { kernel, ext, text } => {
            if !module.kernels.iter().any(|k| &k.name == kernel) {
                let names: Vec<&str> = module.kernels.iter().map(|k| k.name.as_str()).collect();
                return Err(Violation(format!(
                    "contract: the L2 agent may write only kernels the program has ({}), not `{kernel}`",
                    names.join(", ")
                )));
            }
            let payload = ekb_eval::evaluate::compile::payload_backend(backend);
            let lang = KernelLang::from_extension(ext).filter(|l| l.fits(payload)).ok_or_else(|| {
                Violation(format!(
                    "contract: a {} kernel is written in {}, not `.{ext}`",
                    backend.name(),
                    KernelLang::of_backend(payload)
                ))
            })?;
            let mut next = parent.clone();
            next.kernels.insert(kernel.clone(), crate::layers::KernelFile { lang, text: text.clone() });
            Ok((next, Vec::new()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task() -> Task {
        let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tasks/level1/gemv_mobilenetv2_classifier.ekir");
        ekb_eval::tasks::load_task(&file).unwrap()
    }

    #[test]
    fn an_l1_agent_that_changes_the_graph_is_refused() {
        let t = task();
        let host = TargetProfile::load("host").unwrap();
        let layers = Layers::of_task(&t);
        let module = layers.lower(Backend::Cpu, &host).unwrap();
        let graph = Edit::Graph { text: t.source.text.clone(), passes: "none".into() };
        let v = apply(Level::L1, &layers, &module, &graph, &t, Backend::Cpu, &host).unwrap_err();
        assert!(v.0.contains("the L1 agent may change only the schedule"), "{}", v.0);
        // The L0 agent may, as long as the signature stays.
        let (next, notes) = apply(Level::L0, &layers, &module, &graph, &t, Backend::Cpu, &host).unwrap();
        assert_eq!(next.passes, "none");
        assert!(notes.is_empty());
        let renamed =
            Edit::Graph { text: t.source.text.replace("(y: f32", "(z: f32"), passes: "default".into() };
        let v = apply(Level::L0, &layers, &module, &renamed, &t, Backend::Cpu, &host).unwrap_err();
        assert!(v.0.contains("must keep the task's signature"), "{}", v.0);
    }

    #[test]
    fn an_l2_agent_writes_only_kernels_of_the_program_in_its_language() {
        let t = task();
        let host = TargetProfile::load("host").unwrap();
        let layers = Layers::of_task(&t);
        let module = layers.lower(Backend::Cpu, &host).unwrap();
        let name = module.kernels[0].name.clone();
        let other = Edit::Kernel { kernel: "nosuch".into(), ext: "c".into(), text: "void f(){}".into() };
        let v = apply(Level::L2, &layers, &module, &other, &t, Backend::Cpu, &host).unwrap_err();
        assert!(v.0.contains("only kernels the program has"), "{}", v.0);
        let cuda = Edit::Kernel { kernel: name.clone(), ext: "cu".into(), text: "".into() };
        let v = apply(Level::L2, &layers, &module, &cuda, &t, Backend::Cpu, &host).unwrap_err();
        assert!(v.0.contains("a cpu kernel is written in"), "{}", v.0);
        let ok = Edit::Kernel { kernel: name.clone(), ext: "c".into(), text: "int x;".into() };
        let (next, _) = apply(Level::L2, &layers, &module, &ok, &t, Backend::Cpu, &host).unwrap();
        assert!(next.kernels.contains_key(&name));
    }
}
