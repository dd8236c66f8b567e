//! The bodies of the commands whose flags `crate::cli` parses and that are
//! not modules of their own (`audit`, `simulate`, `lsp`, `export` and
//! `policy` are): `lint` and `fix`.

pub mod fix;
pub mod lint;
