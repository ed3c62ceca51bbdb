//! The simulated client: scenarios of steps, symbol replacement, pacing,
//! and the application that runs them on each connection.

pub mod app;
pub mod capture;
pub mod correlate;
pub mod listener;
pub mod scenario;
pub mod slots;
pub mod symbol;
pub mod token;
