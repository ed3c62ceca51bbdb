//! The core's configuration from the command line.

use h2sim_proto::{Config, LocalSettings};

use crate::options::{UsageError, apply_setting};

/// The core's configuration with `-H` settings applied.
pub fn config_with(settings: &[String]) -> Result<Config, UsageError> {
    let mut config = Config::default();
    let mut local = LocalSettings::from_config(&config);
    for spec in settings {
        apply_setting(&mut local, spec)?;
    }
    config.set_local_settings(local);
    Ok(config)
}
