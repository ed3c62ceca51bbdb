//! The dependency rule of the adapters, shared with h2sim-glommio (a file
//! include, as with the interop matrix: not a dependency).

#[path = "../../h2sim-glommio/tests/dependencies.rs"]
mod rule;
