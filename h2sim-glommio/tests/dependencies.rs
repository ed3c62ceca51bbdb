//! The adapters depend on the core, never on each other, not even for
//! their tests or examples: what both need lives in `h2sim-proto`. One
//! file for both adapters: h2sim-tokio's tests include it, and it reads the
//! manifest of the crate it is compiled in.

/// Keys set in this crate's manifest, in any table, without a dotted
/// suffix (`name.workspace = true` is `name`): dependency names among them.
fn declared() -> Vec<String> {
    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"))
        .lines()
        .filter_map(|line| line.split_once('='))
        .filter_map(|(key, _)| key.trim().split('.').next().map(str::to_owned))
        .collect()
}

#[test]
fn an_adapter_depends_on_the_core_and_not_on_its_sibling() {
    let sibling = match env!("CARGO_PKG_NAME") {
        "h2sim-tokio" => "h2sim-glommio",
        _ => "h2sim-tokio",
    };
    let names = declared();
    assert!(names.iter().any(|n| n == "h2sim-proto"), "{names:?}");
    assert!(
        !names.iter().any(|n| n == sibling),
        "{sibling} in {names:?}"
    );
}
