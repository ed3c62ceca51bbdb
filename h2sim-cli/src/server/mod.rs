//! The simulated server: response rules and the application that applies them.

pub mod app;
pub mod files;
pub mod rules;
