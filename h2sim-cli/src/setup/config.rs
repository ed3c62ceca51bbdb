//! The core's configuration from the command line.

use h2sim_proto::{Config, LocalSettings};

use crate::options::{UsageError, apply_setting};

/// The core's configuration with `-H` settings and `--connection-window`
/// applied.
pub fn config_with(
    settings: &[String],
    connection_window: Option<u32>,
) -> Result<Config, UsageError> {
    let mut config = Config::default();
    if let Some(window) = connection_window {
        config.connection_window_size = window;
    }
    let mut local = LocalSettings::from_config(&config);
    for spec in settings {
        apply_setting(&mut local, spec)?;
    }
    config.set_local_settings(local);
    Ok(config)
}
