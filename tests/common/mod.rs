//! Helpers shared by the integration tests.

pub mod cases;
pub mod golden;
