//! `ekb-lower`: L0 graph -> L1 loop program.
