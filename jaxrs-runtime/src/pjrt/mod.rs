//! The PJRT C API: raw declarations (`sys`) under safe owned handles.

mod options;
pub mod sys;

pub use options::CompileOptions;
