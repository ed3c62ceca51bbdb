//! The simulated server: response rules and the application that applies
//! them (`rules`, with their statuses in `status` and what is checked of
//! them at start in `check`), with what rules can do beyond a fixed reply:
//! read the request (`matcher`, `request`, `template`), keep resources
//! (`store`, `resource`), answer with problem details (`problem`), play an
//! OAuth2 token endpoint (`oauth`) and send notifications (`notify`).

pub mod app;
pub mod check;
pub mod files;
pub mod matcher;
pub mod notify;
pub mod oauth;
pub mod problem;
pub mod request;
pub mod resource;
pub mod rules;
pub mod status;
pub mod store;
pub mod template;
