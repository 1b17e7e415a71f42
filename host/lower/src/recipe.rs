//! The default schedule as a recipe: every number the default layout of an operator family
//! depends on is a named knob, with a value derived from the target profile, a valid range and
//! a line of documentation. The knobs are the search space of a tuner: [`Knobs::set`] changes
//! one by name, and [`Knobs::print`] / [`Knobs::parse`] are the recipe's text form,
//!
//! ```text
//! set matmul.tile_cols = 64   # output columns per register tile of a matmul
//! ```
//!
//! one `set` per line, `#` comments. Each operator family's default layout is still a
//! parameterised template (its file under `host/lower/src` builds the nest from these knobs);
//! the families that schedule primitives can express become traces over the naive lowering as
//! the primitives grow (`docs/schedules.md`).
//!
//! What this module must keep true: [`Knobs::for_target`] gives the default schedule's values;
//! every value a [`Knobs`] holds is within its knob's range, so no template sees a value it
//! cannot lower with.

use ekb_ir::diag::did_you_mean;
use ekb_ir::l0::{Graph, Op};
use ekb_ir::{Diagnostic, SourceFile, Span, TargetProfile};

/// A knob of the default schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Knob {
    ThreadsMinWork,
    ThreadsPerCore,
    MatmulTileCols,
    MatmulTileVectors,
    MatmulDotRows,
    MatmulDotCols,
    MatmulPackLinear,
    MatmulKBlock,
    ConvOcBlock,
    ConvOwTile,
    ConvOhBlock,
    ConvCopyMinTaps,
    ConvPlaneCopyBytes,
    ConvWinogradMinChannels,
    ConvPointwiseMaxOw,
    ConvFlatMaxOw,
    ConvPackMaxPixels,
    ConvPackDeepMaxPixels,
    ConvPackTapsMaxPixels,
    ReduceRowTile,
    TransposeTile,
    ConcatInPlace,
    SliceInPlace,
    TransposeInPlace,
    GpuMatmulTile,
    GpuMatmulBlockRows,
    GpuMatmulBlockCols,
    GpuMatmulThreadRows,
    GpuMatmulThreadCols,
    GpuMatmulKTile,
    GpuMatmulMinBlocks,
    GpuMatmulFewRows,
    GpuMatmulSplitK,
    GpuDotMaxRows,
    GpuDotThreads,
    GpuConvTransposeOc,
    GpuConvTransposeRows,
    GpuConvTransposeMinThreads,
}

/// What a knob is: its name in recipes, the operator family that reads it, its documentation
/// and its valid range.
#[derive(Debug, Clone, Copy)]
pub struct KnobSpec {
    pub knob: Knob,
    pub name: &'static str,
    pub family: &'static str,
    pub doc: &'static str,
    pub min: usize,
    pub max: usize,
}

const fn spec(
    knob: Knob,
    name: &'static str,
    family: &'static str,
    doc: &'static str,
    min: usize,
    max: usize,
) -> KnobSpec {
    KnobSpec { knob, name, family, doc, min, max }
}

/// Every knob, in the order recipes print them.
pub const KNOBS: [KnobSpec; 38] = [
    spec(
        Knob::ThreadsMinWork,
        "threads.min_work",
        "threads",
        "scalar operations below which an operator stays on one thread",
        1,
        1 << 30,
    ),
    spec(
        Knob::ThreadsPerCore,
        "threads.per_core",
        "threads",
        "parallel iterations wanted per core (load balance)",
        1,
        64,
    ),
    spec(
        Knob::MatmulTileCols,
        "matmul.tile_cols",
        "matmul",
        "output columns per register tile of a matmul (at least 4 vectors)",
        1,
        1024,
    ),
    spec(
        Knob::MatmulTileVectors,
        "matmul.tile_vectors",
        "matmul",
        "vector accumulators per register tile (rows = this / vectors per row)",
        1,
        64,
    ),
    spec(
        Knob::MatmulDotRows,
        "matmul.dot_rows",
        "matmul",
        "rows per dot-product tile (linear, integer matmul, 1x1 convolutions over a few pixels)",
        1,
        16,
    ),
    spec(
        Knob::MatmulDotCols,
        "matmul.dot_cols",
        "matmul",
        "columns per dot-product tile (linear, integer matmul, 1x1 convolutions over a few pixels)",
        1,
        16,
    ),
    spec(
        Knob::MatmulPackLinear,
        "matmul.pack_linear",
        "matmul",
        "linear layers and matmuls of 16 rows or more pack a 2-D weight of parameters alone in panels of the register tile's columns, [ceil(n / P), k, P], in a prepare step (0: never; 1: where a linear layer widens its rows, and every matmul; 2: always)",
        0,
        2,
    ),
    spec(
        Knob::MatmulKBlock,
        "matmul.k_block",
        "matmul",
        "reduction steps per block of a product over whole panels: every register tile of a panel runs one block before the next, its partial sums kept between blocks (0: the whole reduction a tile)",
        0,
        1 << 16,
    ),
    spec(
        Knob::ConvOcBlock,
        "conv.oc_block",
        "conv",
        "output channels per register tile of a convolution",
        1,
        16,
    ),
    spec(
        Knob::ConvOwTile,
        "conv.ow_tile",
        "conv",
        "output columns per register tile of a convolution",
        1,
        64,
    ),
    spec(
        Knob::ConvOhBlock,
        "conv.oh_block",
        "conv",
        "output rows per register tile of a grouped convolution over its padded planes (depthwise among them), within 16 vector accumulators",
        1,
        16,
    ),
    spec(
        Knob::ConvCopyMinTaps,
        "conv.copy_min_taps",
        "conv",
        "input channels x taps from which an ungrouped convolution reads zero-padded row copies (1: always; 1048576: never)",
        1,
        1 << 20,
    ),
    spec(
        Knob::ConvPlaneCopyBytes,
        "conv.plane_copy_bytes",
        "conv",
        "most bytes of zero-padded input planes a grouped convolution copies per channel block (0: never)",
        0,
        1 << 24,
    ),
    spec(
        Knob::ConvWinogradMinChannels,
        "conv.winograd_min_channels",
        "conv",
        "input and output channels from which a 3x3 stride-1 convolution takes Winograd F(2x2, 3x3) (1048576: never)",
        1,
        1 << 20,
    ),
    spec(
        Knob::ConvPointwiseMaxOw,
        "conv.pointwise_max_ow",
        "conv",
        "1x1 convolutions with output rows narrower than this are products over flattened pixels (0: never)",
        0,
        1 << 16,
    ),
    spec(
        Knob::ConvPackMaxPixels,
        "conv.pack_max_pixels",
        "conv",
        "1x1 unpadded convolutions over at most this many output pixels per image pack a weight of parameters alone in blocks of output channels in a prepare step, channels in the vectors (0: never)",
        0,
        1 << 20,
    ),
    spec(
        Knob::ConvPackDeepMaxPixels,
        "conv.pack_deep_max_pixels",
        "conv",
        "stride-1 1x1 unpadded convolutions of at least 6 vectors of input channels, with output rows not a whole number of vectors, over at most this many output pixels per image are packed as conv.pack_max_pixels says (0: never)",
        0,
        1 << 20,
    ),
    spec(
        Knob::ConvPackTapsMaxPixels,
        "conv.pack_taps_max_pixels",
        "conv",
        "other ungrouped convolutions (3x3, strided, padded) over at most this many output pixels per image do the same over their zero-padded input planes (0: never)",
        0,
        1 << 20,
    ),
    spec(
        Knob::ConvFlatMaxOw,
        "conv.flat_max_ow",
        "conv",
        "convolutions with output rows narrower than this (ungrouped, grouped or depthwise), and transposed ones with phase rows narrower, are products over flattened padded planes (0: never)",
        0,
        1 << 16,
    ),
    spec(
        Knob::ReduceRowTile,
        "reduce.row_tile",
        "reduce",
        "elements per tile of a row reduction (softmax, norms)",
        1,
        1 << 16,
    ),
    spec(
        Knob::TransposeTile,
        "transpose.tile",
        "movement",
        "side of the square tiles of a transpose",
        1,
        256,
    ),
    spec(
        Knob::ConcatInPlace,
        "concat.in_place",
        "movement",
        "the kernels writing a concat's operands write their slices of its result, and the concat's copy goes (1; 0: never)",
        0,
        1,
    ),
    spec(
        Knob::SliceInPlace,
        "slice.in_place",
        "movement",
        "the kernels reading a slice of unit steps read its window of the operand, and the slice's copy goes (1; 0: never)",
        0,
        1,
    ),
    spec(
        Knob::TransposeInPlace,
        "transpose.in_place",
        "movement",
        "the kernels reading a transpose that keeps the last axis read its operand, or (GPU) those writing its operand write its result, and the transpose's copy goes (1; 0: never)",
        0,
        1,
    ),
    spec(
        Knob::GpuMatmulTile,
        "gpu.matmul_tile",
        "gpu.matmul",
        "side of the shared-memory tiles of a GPU matmul too small for its register tiles (tile^2 threads)",
        1,
        32,
    ),
    spec(
        Knob::GpuMatmulBlockRows,
        "gpu.matmul_block_rows",
        "gpu.matmul",
        "output rows per block of a GPU matmul's register tiles (a multiple of the thread rows)",
        1,
        256,
    ),
    spec(
        Knob::GpuMatmulBlockCols,
        "gpu.matmul_block_cols",
        "gpu.matmul",
        "output columns per block of a GPU matmul's register tiles (a multiple of the thread columns)",
        1,
        256,
    ),
    spec(
        Knob::GpuMatmulThreadRows,
        "gpu.matmul_thread_rows",
        "gpu.matmul",
        "output rows per thread of a GPU matmul's register tiles",
        1,
        16,
    ),
    spec(
        Knob::GpuMatmulThreadCols,
        "gpu.matmul_thread_cols",
        "gpu.matmul",
        "output columns per thread of a GPU matmul's register tiles",
        1,
        16,
    ),
    spec(
        Knob::GpuMatmulKTile,
        "gpu.matmul_k_tile",
        "gpu.matmul",
        "k per shared-memory stage of a GPU matmul's register tiles (at most 16 loads per thread)",
        1,
        64,
    ),
    spec(
        Knob::GpuMatmulMinBlocks,
        "gpu.matmul_min_blocks",
        "gpu.matmul",
        "blocks a GPU matmul's register tiles should make: halved towards it, else 16x16 tiles (0: any)",
        0,
        1 << 16,
    ),
    spec(
        Knob::GpuMatmulFewRows,
        "gpu.matmul_few_rows",
        "gpu.matmul",
        "most rows per batch of a GPU matmul whose register tiles, when their grid holds under 256 threads per compute unit, take 2x2 thread tiles (0: never)",
        0,
        1 << 16,
    ),
    spec(
        Knob::GpuMatmulSplitK,
        "gpu.matmul_split_k",
        "gpu.matmul",
        "most groups of threads a GPU matmul's register-tile block splits `k` between, while its grid holds under 256 threads per compute unit (1: never)",
        1,
        16,
    ),
    spec(
        Knob::GpuDotMaxRows,
        "gpu.dot_max_rows",
        "gpu.matmul",
        "most rows per batch a GPU matmul computes as dot products",
        0,
        64,
    ),
    spec(
        Knob::GpuDotThreads,
        "gpu.dot_threads",
        "gpu.matmul",
        "most threads of a GPU dot product's block",
        1,
        1024,
    ),
    spec(
        Knob::GpuConvTransposeOc,
        "gpu.conv_transpose_oc",
        "gpu.conv_transpose",
        "output channels per thread of a GPU transposed convolution by cells (a divisor of them; 0: a thread per output)",
        0,
        16,
    ),
    spec(
        Knob::GpuConvTransposeRows,
        "gpu.conv_transpose_rows",
        "gpu.conv_transpose",
        "cell rows (a cell: one output per stride phase) per thread of a GPU transposed convolution",
        1,
        16,
    ),
    spec(
        Knob::GpuConvTransposeMinThreads,
        "gpu.conv_transpose_min_threads",
        "gpu.conv_transpose",
        "threads per compute unit a GPU transposed convolution by cells should keep: channels, then rows, per thread reduced towards it, else a thread per output (0: any)",
        0,
        4096,
    ),
];

/// The values of every knob.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Knobs {
    values: [usize; KNOBS.len()],
}

fn index(k: Knob) -> usize {
    KNOBS.iter().position(|s| s.knob == k).expect("every knob has a spec")
}

impl Knobs {
    /// The default schedule's values for `target`. Only the matmul register and dot tiles,
    /// `conv.oc_block` and `conv.flat_max_ow` (the vector registers), `gpu.matmul_min_blocks`,
    /// `gpu.matmul_few_rows` and `gpu.matmul_split_k` (the GPU's compute units) depend on the
    /// profile; the templates read the core count and SIMD width themselves.
    pub fn for_target(target: &TargetProfile) -> Knobs {
        let lanes = target.cpu_f32_lanes().max(1) as usize;
        // x86-64 below AVX-512 has 16 vector registers; AVX-512 and aarch64 have 32.
        let sixteen_registers = target.cpu.triple.starts_with("x86_64") && target.cpu.vector_bits < 512;
        let mut values = [0; KNOBS.len()];
        for (v, s) in values.iter_mut().zip(&KNOBS) {
            *v = match s.knob {
                Knob::ThreadsMinWork => 1 << 16,
                Knob::ThreadsPerCore => 4,
                // A register tile's accumulators, the row of `b` it loads and the broadcast of
                // `a` must fit the vector registers: 24 + 4 + 1 of AVX-512's 32 (6 rows of 4
                // vectors: 10 loads per 24 FMAs; at 16, 4 rows, 8 loads per 16, a 512^3 matmul
                // took 0.97-1.05 ms against 0.85-0.86, a 1000 x 512 x 169 1x1 convolution 824
                // against 615 us, Level 3 against onnxruntime 0.84x -> 0.86x twice, on a 2-core
                // AVX-512 Xeon VM); NEON's 64 columns are 16 vectors, one row either way; x86
                // with 256-bit vectors has 16 registers, where 16 accumulators of 8 vectors a
                // row spilled a dozen registers per `k` step: a 512^3 matmul took 4.5 ms at 64
                // columns and 16 accumulators, 2.95 at 32 and 8 (2x4 vectors) on a 2-core AVX2
                // EPYC.
                Knob::MatmulTileCols if sixteen_registers => 32,
                Knob::MatmulTileCols => 64,
                Knob::MatmulTileVectors if sixteen_registers => 8,
                Knob::MatmulTileVectors if lanes >= 16 => 24,
                Knob::MatmulTileVectors => 16,
                Knob::MatmulDotRows => 4,
                // 4x4 dot tiles are 16 vector sums besides their 8 loads: on AVX2 a 32 x 3072
                // -> 768 layer read the stack 49 times per `k` step (none at 4x2); Level 3
                // against onnxruntime 0.75x -> 0.78x, the transformers 1.2-1.3x (2-core EPYC).
                Knob::MatmulDotCols if sixteen_registers => 2,
                Knob::MatmulDotCols => 4,
                // Packed, a layer narrowing its rows re-reads its whole weight per row tile of
                // the register tiles (prepack.rs).
                Knob::MatmulPackLinear => 1,
                // A packed panel of 64 columns over 128 steps is 32 KB, an L1's worth: blocks
                // of it serve every row tile before the next is read. On a 2-core AVX-512 VM,
                // a 32-row linear layer of 896 -> 4864 took 945 us against 997-1057 unblocked
                // (onnxruntime 877); paired over the Level-3 transformer graphs against 0,
                // 0.99x to 1.04x (`gpt2_block_s64` 1.04x [1.03, 1.07]). Unmeasured on AVX2
                // and NEON.
                Knob::MatmulKBlock if lanes >= 16 => 128,
                Knob::MatmulKBlock => 0,
                // 16 vector accumulators of a 16-column tile: 16 x 1 AVX-512 vectors, 4 x 4
                // NEON. With 16 registers, 12 (6 x 2 AVX2 vectors) leave room for the input
                // row and the broadcast weight: the 64-channel 3x3 anchor (Winograd, whose
                // products take as many accumulators) took 2.4-2.5 ms at 8 x 2, 1.3-1.5 at
                // 6 x 2 and 1.6-1.9 at 4 x 2 on a 2-core AVX2 EPYC.
                Knob::ConvOcBlock if sixteen_registers => 6,
                Knob::ConvOcBlock => (16 / 16usize.div_ceil(lanes)).clamp(1, 16),
                Knob::ConvOwTile => 16,
                // A depthwise tile of one channel is one chain of dependent FMAs; four rows
                // make four, and share the loads of the input rows they overlap (3x3 over
                // 56x56 planes: 1.5x on one thread, flat from 2 to 8 rows).
                Knob::ConvOhBlock => 4,
                Knob::ConvCopyMinTaps => 1,
                Knob::ConvPlaneCopyBytes => 65536,
                Knob::ConvWinogradMinChannels => 16,
                // Rows narrower than half a vector leave most lanes of the direct tiles idle
                // (7-wide rows of 16 lanes: 2.2x faster as products, 14-wide ones slower).
                Knob::ConvPointwiseMaxOw => lanes / 2,
                // Rows between one and two AVX2 vectors wide run most of their columns as the
                // scalar remainder of the direct tiles (13 columns: 8 lanes and 5 scalar
                // steps); as products over flattened planes, Level 3 against onnxruntime went
                // from 0.49x to 0.70x in geomean on a 2-core AVX2 EPYC (SqueezeNet 0.23x to
                // 0.65x).
                Knob::ConvFlatMaxOw if sixteen_registers => 2 * lanes,
                Knob::ConvFlatMaxOw => lanes,
                // Packed by blocks of output channels (prepack.rs), 7x7 planes and smaller: on
                // one core of a 2-core AVX-512 VM, whole models 1.52x (YAMNet's 6x4 and 3x2
                // planes), 1.10x (RegNet's 5x5), 1.07x (MnasNet), 1.04x (MobileNetV2), 1.03x
                // (EfficientNet-B0) against no packing (with 32 pixels: 1.40x, 1.12x, 0.99x,
                // 1.02x, 1.00x). A packed weight is a second copy of the weight, in the planned
                // peak beside the parameters.
                Knob::ConvPackMaxPixels => 64,
                // Over more pixels a packed tile's stores cross the channel planes a pixel at a
                // time, and a fused epilogue (an unfolded batch norm, a residual add) runs per
                // pixel with the channels in the vectors: alone, the 108 stride-1 1x1 layers of
                // 65 to 400 pixels of Level 3 took 18.7 -> 16.2 ms at 784 on a 2-core AVX-512 VM
                // (MobileNetV1's 512 -> 512 over 10x10 205 -> 160 us), but inside the models,
                // with their epilogues, MobileNetV2 and MnasNet were 10-15% slower (a 576 -> 96
                // layer with its batch norm and residual 102 -> 151 us). Off; a tuner's choice.
                Knob::ConvPackDeepMaxPixels => 0,
                // As flattened padded planes a 4x4 output is 24 positions of a 6-wide padded
                // row, two 16-lane vectors: 256 -> 256 3x3 convolutions on a 2-core AVX-512 VM,
                // the default layouts against packed, 2x2 pixels 184-338 us against 45-106,
                // 4x4 210 against 115-135, 7x7 373-393 against 288-304 (onnxruntime 281),
                // 13x13 1170-1290 against 986-1014 (978); 128 channels over 14x14 333-587
                // against 286 (268); 64 over 28x28 (Winograd) 314 against 304-309 and over
                // 55x55 1184-1317 against 1223-1228: no gain past 14x14, and every packed
                // weight is a second copy.
                Knob::ConvPackTapsMaxPixels => 196,
                Knob::ReduceRowTile => 256,
                Knob::TransposeTile => 32,
                Knob::ConcatInPlace => 1,
                Knob::SliceInPlace => 1,
                Knob::TransposeInPlace => 1,
                Knob::GpuMatmulTile => 16,
                // 64x64 outputs per block, 8x4 per thread (128 threads, 32 accumulators each),
                // k in stages of 16: a 1024x1024 output is 256 blocks, two per SM of an H200.
                Knob::GpuMatmulBlockRows => 64,
                Knob::GpuMatmulBlockCols => 64,
                Knob::GpuMatmulThreadRows => 8,
                Knob::GpuMatmulThreadCols => 4,
                Knob::GpuMatmulKTile => 16,
                // A block per compute unit at least (132 SMs on an H200).
                Knob::GpuMatmulMinBlocks => {
                    target.gpu.as_ref().map_or(1, |g| (g.compute_units as usize).min(1 << 16))
                }
                // The projections of a transformer layer over 32 or 64 tokens: on an H100, the
                // 20 tasks whose lowering it changes were 1.10x faster in geomean (0.99x to
                // 1.25x; qwen2_05b_layer_s32 519 -> 439 us, docs/gpu.md). Measured there only: a
                // GPU of fewer than 64 compute units (Jetson Orin's 16 SMs, a Mali, PoCL) keeps
                // the knobs' tiles.
                Knob::GpuMatmulFewRows => {
                    if target.gpu.as_ref().is_some_and(|g| g.compute_units >= 64) {
                        64
                    } else {
                        0
                    }
                }
                // On an H100, transformer layers of 32 and 64 tokens: 1.30x to 1.67x with 8
                // groups against none (qwen2_05b_layer_s32 438 -> 266 us; 4 and 16 within 7% of
                // 8, docs/gpu.md); the same GPUs as `gpu.matmul_few_rows`, whose tiles it splits.
                Knob::GpuMatmulSplitK => {
                    if target.gpu.as_ref().is_some_and(|g| g.compute_units >= 64) {
                        8
                    } else {
                        1
                    }
                }
                Knob::GpuDotMaxRows => 4,
                Knob::GpuDotThreads => 128,
                Knob::GpuConvTransposeOc => 2,
                Knob::GpuConvTransposeRows => 2,
                // On an H200 (132 SMs), LinkNet's decoder (128 channels, 16x32 cells) was fastest
                // at 496 cells per SM, one channel and row each (36 us; 41.7 one thread per
                // output, 38 at 2x2, 124 threads per SM); DCGAN's 4x4 layer, 124 cells per SM,
                // was 34 us by cells and 20.5 one thread per output.
                Knob::GpuConvTransposeMinThreads => 256,
            };
        }
        Knobs { values }
    }

    pub fn get(&self, k: Knob) -> usize {
        self.values[index(k)]
    }

    /// Sets the knob `name` to `value`: an unknown name or a value out of range is refused.
    pub fn set(&mut self, name: &str, value: usize) -> Result<(), Diagnostic> {
        let Some(i) = KNOBS.iter().position(|s| s.name == name) else {
            let mut d = Diagnostic::error(format!("unknown knob `{name}`"))
                .with_expected(format!("one of {}", KNOBS.map(|s| format!("`{}`", s.name)).join(", ")));
            d.hint = did_you_mean(name, KNOBS.map(|s| s.name));
            return Err(d);
        };
        let s = &KNOBS[i];
        if value < s.min || value > s.max {
            return Err(Diagnostic::error(format!("knob `{name}` = {value} is out of range"))
                .with_expected(format!("{}..={} ({})", s.min, s.max, s.doc)));
        }
        self.values[i] = value;
        Ok(())
    }

    /// The recipe text of the knobs of `families` (all knobs for `None`): one `set` per line,
    /// with its documentation as a comment.
    pub fn print(&self, families: Option<&[&str]>) -> String {
        let mut out = String::new();
        for (s, v) in KNOBS.iter().zip(self.values) {
            if families.is_none_or(|f| f.contains(&s.family)) {
                out.push_str(&format!("set {} = {v}  # {}\n", s.name, s.doc));
            }
        }
        out
    }

    /// Applies the `set NAME = VALUE` lines of a recipe text to these knobs. Errors are located
    /// in `src`.
    pub fn parse(&mut self, src: &SourceFile) -> Result<(), Diagnostic> {
        let mut offset = 0;
        for line in src.text.split_inclusive('\n') {
            let code = line.split('#').next().unwrap_or("");
            let start = offset + (code.len() - code.trim_start().len());
            let span = Span::new(start, offset + code.trim_end().len());
            offset += line.len();
            let code = code.trim();
            if code.is_empty() {
                continue;
            }
            let bad =
                |msg: String| src.locate(Diagnostic::error(msg).at(span).with_expected("`set NAME = VALUE`"));
            let Some(rest) = code.strip_prefix("set ") else {
                return Err(bad(format!("`{code}` is not a knob setting")));
            };
            let Some((name, value)) = rest.split_once('=') else {
                return Err(bad(format!("`{code}` has no `=`")));
            };
            let value: usize = value
                .trim()
                .parse()
                .map_err(|_| bad(format!("`{}` is not a non-negative integer", value.trim())))?;
            self.set(name.trim(), value).map_err(|d| src.locate(d.at(span)))?;
        }
        Ok(())
    }
}

/// The families of knobs the default lowering of `g` reads: `threads` and the operator
/// families of its nodes (CPU), or the GPU lowering's.
pub fn families_of(g: &Graph, gpu: bool) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = if gpu { Vec::new() } else { vec!["threads"] };
    for n in &g.nodes {
        let families: &[&'static str] = match (&n.op, gpu) {
            (Op::MatMul { .. } | Op::Linear | Op::Conv2d(_), true) => &["gpu.matmul"],
            (Op::ConvTranspose2d(_), true) => &["gpu.conv_transpose"],
            (Op::MatMul { .. } | Op::Linear, false) => &["matmul"],
            // The pointwise, flattened and depthwise layouts (and the transposed convolutions'
            // flattened plane) run the matmul's register and dot tiles, sized by its knobs.
            (Op::Conv2d(_) | Op::ConvTranspose2d(_), false) => &["conv", "matmul"],
            (Op::Reduce { .. } | Op::ArgMax { .. } | Op::Softmax { .. } | Op::GlobalAvgPool2d, false) => {
                &["reduce"]
            }
            (Op::Transpose { .. }, false) => &["movement"],
            _ => continue,
        };
        for family in families {
            if !out.contains(family) {
                out.push(family);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knobs_print_parse_back_and_refuse_bad_settings() {
        let host = TargetProfile::load("host").unwrap();
        let base = Knobs::for_target(&host);
        let mut k = base;
        k.set("matmul.tile_cols", 32).unwrap();
        let mut back = base;
        back.parse(&SourceFile::new("r.recipe", k.print(None))).unwrap();
        assert_eq!(back, k);
        assert_eq!(back.get(Knob::MatmulTileCols), 32);
        let d = k.set("matmul.tile_col", 8).unwrap_err();
        assert_eq!(d.hint.as_deref(), Some("did you mean `matmul.tile_cols`?"));
        assert!(k.set("conv.oc_block", 0).unwrap_err().message.contains("out of range"));
        let d = back.parse(&SourceFile::new("r.recipe", "# tiles\nset conv.ow_tile = x\n")).unwrap_err();
        assert_eq!(d.location.as_ref().unwrap().line, 2);
        assert!(base.print(Some(&["conv"])).lines().all(|l| l.starts_with("set conv.")));
    }
}
