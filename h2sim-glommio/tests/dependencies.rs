//! The adapters depend on the core, never on each other, not even for
//! their tests or examples: what both need lives in `h2sim-proto`.

/// Keys set in this crate's manifest, in any table, without a dotted
/// suffix (`name.workspace = true` is `name`): dependency names among them.
fn declared() -> Vec<String> {
    include_str!("../Cargo.toml")
        .lines()
        .filter_map(|line| line.split_once('='))
        .filter_map(|(key, _)| key.trim().split('.').next().map(str::to_owned))
        .collect()
}

#[test]
fn h2sim_glommio_does_not_depend_on_h2sim_tokio() {
    let names = declared();
    assert!(names.iter().any(|n| n == "h2sim-proto"), "{names:?}");
    assert!(!names.iter().any(|n| n == "h2sim-tokio"), "{names:?}");
}
