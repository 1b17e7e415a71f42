//! Runs compiled kernel objects outside this process, the way a board does: a small C driver
//! (`tests/support/driver.c`) loads a shared library linked from the object, provides
//! `ekb_parallel_for`, runs a plan and writes the buffers back. Built for the host with clang-19
//! and for aarch64 with `aarch64-linux-gnu-gcc`, where it runs under `qemu-aarch64`.

use super::cases::Bufs;
use ekb_ir::l1::interp::{POISON_F16_BITS, POISON_F32_BITS, POISON_I32, POISON_I8};
use ekb_ir::l1::{BufferRole, Module};
use ekb_ir::tensor::Buffer;
use ekb_ir::types::DType;
use ekb_llvm::{kernel_symbol, Arch};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};

const DRIVER_C: &str = include_str!("../support/driver.c");

/// How to build and run programs for one architecture.
pub struct Toolchain {
    pub arch: Arch,
    /// The C compiler and linker (also links the kernel library).
    pub cc: Vec<String>,
    /// The command that runs a program (empty: run it directly).
    pub runner: Vec<String>,
}

fn require(tool: &str) -> String {
    let found = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()))
        .unwrap_or(false);
    assert!(found, "`{tool}` not found: run toolchains/setup.sh");
    tool.to_string()
}

impl Toolchain {
    pub fn host() -> Toolchain {
        let clang = ekb_llvm::find_clang().unwrap_or_else(|d| panic!("{d}"));
        Toolchain {
            arch: Arch::host().unwrap(),
            cc: vec![clang.display().to_string(), "-fuse-ld=lld".into()],
            runner: vec![],
        }
    }

    pub fn aarch64() -> Toolchain {
        Toolchain {
            arch: Arch::Aarch64,
            cc: vec![require("aarch64-linux-gnu-gcc")],
            runner: vec![require("qemu-aarch64"), "-L".into(), "/usr/aarch64-linux-gnu".into()],
        }
    }

    fn run_cc(&self, args: &[&str]) {
        let out = Command::new(&self.cc[0]).args(&self.cc[1..]).args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{:?} {args:?} failed:\n{}",
            self.cc,
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Builds the driver once per test process, in `dir`.
    pub fn driver(&self, dir: &Path) -> PathBuf {
        let src = dir.join("driver.c");
        std::fs::write(&src, DRIVER_C).unwrap();
        let exe = dir.join(format!("driver-{}", self.arch.name()));
        self.run_cc(&["-O1", "-rdynamic", src.to_str().unwrap(), "-o", exe.to_str().unwrap(), "-ldl"]);
        exe
    }

    /// Links a kernel object into a shared library (`ekb_parallel_for` stays undefined: the
    /// driver provides it).
    pub fn link(&self, object: &Path, so: &Path) {
        self.run_cc(&["-shared", object.to_str().unwrap(), "-o", so.to_str().unwrap(), "-lm"]);
    }

    /// Runs the plan of `m`; the outputs, or how the driver ended and its stderr.
    pub fn run_plan(
        &self,
        driver: &Path,
        so: &Path,
        m: &Module,
        inputs: &Bufs,
        chunks: u32,
    ) -> Result<Bufs, (ExitStatus, String)> {
        let dir = so.parent().unwrap();
        let (job, out) = (dir.join(format!("{}.job", m.name)), dir.join(format!("{}.out", m.name)));
        let mut bytes: Vec<u8> = Vec::new();
        let put = |b: &mut Vec<u8>, v: u32| b.extend_from_slice(&v.to_le_bytes());
        put(&mut bytes, 0x4a42_4b45);
        put(&mut bytes, chunks);
        put(&mut bytes, m.buffers.len() as u32);
        for b in &m.buffers {
            let data = match inputs.get(&b.name) {
                Some(given) => given.as_bytes().to_vec(),
                None => match b.ty.dtype {
                    DType::F32 => POISON_F32_BITS.to_le_bytes().repeat(b.ty.numel()),
                    DType::I32 => POISON_I32.to_le_bytes().repeat(b.ty.numel()),
                    DType::I8 => vec![POISON_I8 as u8; b.ty.numel()],
                    DType::F16 => POISON_F16_BITS.to_le_bytes().repeat(b.ty.numel()),
                },
            };
            bytes.extend_from_slice(&(data.len() as u64).to_le_bytes());
            bytes.extend_from_slice(&data);
        }
        put(&mut bytes, m.plan.len() as u32);
        for r in &m.plan {
            let sym = kernel_symbol(&r.kernel);
            put(&mut bytes, sym.len() as u32);
            bytes.extend_from_slice(sym.as_bytes());
            put(&mut bytes, r.args.len() as u32);
            for a in &r.args {
                put(&mut bytes, m.buffers.iter().position(|b| b.name == a.name).unwrap() as u32);
            }
        }
        std::fs::write(&job, bytes).unwrap();
        let mut cmd = match self.runner.split_first() {
            Some((prog, args)) => {
                let mut c = Command::new(prog);
                c.args(args).arg(driver);
                c
            }
            None => Command::new(driver),
        };
        let res = cmd.arg(so).arg(&job).arg(&out).output().unwrap();
        if !res.status.success() {
            return Err((res.status, String::from_utf8_lossy(&res.stderr).into_owned()));
        }
        let all = std::fs::read(&out).unwrap();
        let mut at = 0;
        let mut outputs = Bufs::new();
        for b in &m.buffers {
            let n = b.ty.size_bytes();
            if b.role == BufferRole::Output {
                let mut buf = Buffer::zeros(&b.ty);
                buf.as_bytes_mut().copy_from_slice(&all[at..at + n]);
                outputs.insert(b.name.clone(), buf);
            }
            at += n;
        }
        assert_eq!(at, all.len(), "the driver wrote {} bytes, the module's buffers take {at}", all.len());
        Ok(outputs)
    }
}
