//! `ekb-llvm`: L1 -> LLVM IR.
