//! The arithmetic of a run.

use crate::error::{Error, Result};

/// The arithmetic a run uses on every backend.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Precision {
    #[default]
    F32,
    F64,
}

impl Precision {
    pub fn name(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::F64 => "f64",
        }
    }
    pub fn parse(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "f32" | "single" | "float" => Ok(Precision::F32),
            "f64" | "double" => Ok(Precision::F64),
            _ => Err(Error::UnknownName {
                kind: "precision",
                name: crate::error::clip(s),
                known: "f32, f64".into(),
            }),
        }
    }
}
