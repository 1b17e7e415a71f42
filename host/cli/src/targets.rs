//! `ekb targets`: the shipped target profiles, as a table or JSON.

use ekb_ir::TargetProfile;
use std::process::ExitCode;

/// List the target profiles (built into ekb from toolchains/*.toml).
#[derive(clap::Args)]
pub struct Args {
    /// Print the full profiles as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<ExitCode, String> {
    let profiles = TargetProfile::builtin();
    if args.json {
        println!("{}", serde_json::to_string_pretty(&profiles).expect("profiles serialise"));
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{:<14} {:<28} {:<14} {:>5} {:>6}  {:<22} description",
        "name", "cpu triple", "-mcpu", "cores", "simd", "gpu"
    );
    for p in &profiles {
        let cores = if p.cpu.clusters.is_empty() {
            "auto".to_string()
        } else {
            p.cpu.clusters.iter().map(|c| c.count.to_string()).collect::<Vec<_>>().join("+")
        };
        let gpu =
            p.gpu.as_ref().map_or("-".to_string(), |g| format!("{:?} {}", g.api, g.arch).to_lowercase());
        println!(
            "{:<14} {:<28} {:<14} {:>5} {:>6}  {:<22} {}",
            p.name, p.cpu.triple, p.cpu.cpu, cores, p.cpu.vector_bits, gpu, p.description
        );
    }
    Ok(ExitCode::SUCCESS)
}
