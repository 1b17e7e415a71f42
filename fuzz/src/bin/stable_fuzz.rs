//! A stable-Rust fuzz driver for machines without a nightly toolchain or cargo-fuzz: runs a
//! target body (the same function the libFuzzer target calls) over a seed corpus and then over
//! random mutations of it for a given time.
//!
//! Usage: `cargo run --release --no-default-features --bin stable_fuzz -- TARGET SECONDS [SEED]
//! DIR...` with TARGET `parse_l0`, `parse_l1` or `requests`. There is no coverage feedback; instead inputs
//! the target accepts join the pool, which steers mutation toward well-formed text. A panicking
//! input is written to `artifacts/TARGET/crash-<hash>` and counted; the exit status is 1 when
//! any crash was found. Before each run the input is written to `artifacts/TARGET/last-input`,
//! so an abort that cannot be caught (a stack overflow) leaves its input behind.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: stable_fuzz parse_l0|parse_l1|requests SECONDS [SEED] DIR...";
    let (Some(target), Some(secs)) = (args.first(), args.get(1).and_then(|s| s.parse::<u64>().ok())) else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let body: fn(&[u8]) -> bool = match target.as_str() {
        "parse_l0" => ekb_fuzz::parse_l0,
        "parse_l1" => ekb_fuzz::parse_l1,
        "requests" => ekb_fuzz::requests,
        _ => {
            eprintln!("unknown target `{target}`; {usage}");
            std::process::exit(2);
        }
    };
    let mut rest = &args[2..];
    let seed = match rest.first().and_then(|s| s.parse::<u64>().ok()) {
        Some(s) => {
            rest = &rest[1..];
            s
        }
        None => 1,
    };
    let mut pool: Vec<Vec<u8>> = Vec::new();
    for dir in rest {
        read_corpus(Path::new(dir), &mut pool);
    }
    if pool.is_empty() {
        pool.push(b"graph g(x: f32[2]) -> (y: f32[2]) {\n  return x\n}\n".to_vec());
    }
    let dict = dictionary(&pool);
    let artifacts = PathBuf::from("artifacts").join(target);
    std::fs::create_dir_all(&artifacts).expect("create the artifacts directory");
    let last = artifacts.join("last-input");
    std::panic::set_hook(Box::new(|_| {}));

    let mut rng = Rng(seed);
    let (mut execs, mut accepted, mut crashes) = (0u64, 0u64, 0u64);
    let start = Instant::now();
    let mut run = |input: &[u8], pool: &mut Vec<Vec<u8>>, grow: bool| {
        std::fs::write(&last, input).expect("write last-input");
        execs += 1;
        match std::panic::catch_unwind(|| body(input)) {
            Ok(true) => {
                accepted += 1;
                if grow && pool.len() < 5000 {
                    pool.push(input.to_vec());
                }
            }
            Ok(false) => {}
            Err(e) => {
                crashes += 1;
                let mut h = DefaultHasher::new();
                input.hash(&mut h);
                let path = artifacts.join(format!("crash-{:016x}", h.finish()));
                std::fs::write(&path, input).expect("write crash input");
                let msg = e
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                eprintln!("CRASH ({}): {msg}", path.display());
            }
        }
    };
    for seed_input in pool.clone() {
        run(&seed_input, &mut pool, false);
    }
    let seeds = pool.len();
    while start.elapsed() < Duration::from_secs(secs) {
        let mut input = pool[rng.below(pool.len())].clone();
        for _ in 0..1 + rng.below(4) {
            mutate(&mut input, &pool, &dict, &mut rng);
        }
        run(&input, &mut pool, true);
    }
    let _ = std::fs::remove_file(&last);
    println!(
        "{target}: {execs} executions in {:.1} s, {seeds} seeds, {accepted} accepted, pool {} inputs, {crashes} crashes",
        start.elapsed().as_secs_f64(),
        pool.len()
    );
    if crashes > 0 {
        std::process::exit(1);
    }
}

/// Every file directly inside `dir` (or `dir` itself when it is a file).
fn read_corpus(dir: &Path, out: &mut Vec<Vec<u8>>) {
    if dir.is_file() {
        out.extend(std::fs::read(dir).ok());
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        eprintln!("cannot read corpus directory {}", dir.display());
        return;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths.into_iter().filter(|p| p.is_file()) {
        out.extend(std::fs::read(&p).ok());
    }
}

/// Tokens of the seed corpus (words, numbers, punctuation runs), deduplicated: the mutator
/// splices them in so that mutations stay close to the grammar.
fn dictionary(pool: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let mut dict: Vec<Vec<u8>> = Vec::new();
    for input in pool {
        let mut i = 0;
        while i < input.len() {
            let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'%' || b == b'.';
            let start = i;
            if word(input[i]) {
                while i < input.len() && word(input[i]) {
                    i += 1;
                }
            } else {
                i += 1;
            }
            let tok = input[start..i].to_vec();
            if !tok.iter().all(u8::is_ascii_whitespace) && !dict.contains(&tok) {
                dict.push(tok);
            }
        }
    }
    for extra in
        ["-", "-1", "0", "inf", "-inf", "nan", "1e-5", "9223372036854775807", "[]", "()", "\u{e9}", "\n"]
    {
        dict.push(extra.as_bytes().to_vec());
    }
    dict
}

/// One random edit: byte flips, insertions, deletions, duplications, token splices, line swaps,
/// truncation, or a crossover with another pool input.
fn mutate(input: &mut Vec<u8>, pool: &[Vec<u8>], dict: &[Vec<u8>], rng: &mut Rng) {
    let n = input.len();
    let pos = |rng: &mut Rng| rng.below(n + 1);
    match rng.below(10) {
        0 if n > 0 => {
            let i = rng.below(n);
            input[i] ^= 1 << rng.below(8);
        }
        1 => {
            let i = pos(rng);
            input.insert(i, rng.below(256) as u8);
        }
        2 if n > 0 => {
            let i = rng.below(n);
            let len = 1 + rng.below((n - i).min(16));
            input.drain(i..i + len);
        }
        3 if n > 0 => {
            let i = rng.below(n);
            let len = 1 + rng.below((n - i).min(64));
            let chunk = input[i..i + len].to_vec();
            let at = pos(rng);
            input.splice(at..at, chunk);
        }
        4 | 5 => {
            let tok = &dict[rng.below(dict.len())];
            let at = pos(rng);
            input.splice(at..at, tok.iter().copied());
        }
        6 if n > 0 => {
            // Replace one token-sized run with a dictionary token.
            let i = rng.below(n);
            let mut j = i;
            while j < n && input[j].is_ascii_alphanumeric() {
                j += 1;
            }
            let tok = &dict[rng.below(dict.len())];
            input.splice(i..j.max(i + 1).min(n), tok.iter().copied());
        }
        7 => {
            let mut lines: Vec<Vec<u8>> = input.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
            if lines.len() > 1 {
                let (a, b) = (rng.below(lines.len()), rng.below(lines.len()));
                lines.swap(a, b);
                *input = lines.join(&b'\n');
            }
        }
        8 => input.truncate(pos(rng)),
        _ => {
            let other = &pool[rng.below(pool.len())];
            let cut = pos(rng);
            let from = rng.below(other.len() + 1);
            input.truncate(cut);
            input.extend_from_slice(&other[from..]);
        }
    }
    if input.len() > 64 * 1024 {
        input.truncate(64 * 1024);
    }
}

/// splitmix64.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}
