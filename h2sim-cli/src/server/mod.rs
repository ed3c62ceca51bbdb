//! The simulated server: response rules and the application that applies them.

pub mod app;
pub mod rules;
pub mod rules_file;
