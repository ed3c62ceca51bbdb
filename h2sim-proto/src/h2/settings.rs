//! Our side of SETTINGS (RFC 9113 §6.5): what we advertised, what the peer
//! has acknowledged, and what therefore binds it now.

use std::collections::VecDeque;
use std::time::Instant;

use crate::config::Config;
use crate::error::UserError;
use crate::frame::{
    DEFAULT_INITIAL_WINDOW_SIZE, DEFAULT_MAX_FRAME_SIZE, MAX_FRAME_SIZE_LIMIT, MAX_WINDOW_SIZE,
    Setting, Settings,
};
use crate::trim::Trim;

/// The values an endpoint advertises (RFC 9113 §6.5.2, RFC 8441 §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LocalSettings {
    pub header_table_size: u32,
    pub enable_push: bool,
    pub max_concurrent_streams: u32,
    pub initial_window_size: u32,
    pub max_frame_size: u32,
    pub max_header_list_size: u32,
    /// SETTINGS_ENABLE_CONNECT_PROTOCOL (RFC 8441 §3).
    pub enable_connect_protocol: bool,
}

impl LocalSettings {
    /// The values that hold before any SETTINGS (§6.5.2); "unlimited" as the
    /// largest number.
    const RFC_DEFAULTS: LocalSettings = LocalSettings {
        header_table_size: 4096,
        enable_push: true,
        max_concurrent_streams: u32::MAX,
        initial_window_size: DEFAULT_INITIAL_WINDOW_SIZE,
        max_frame_size: DEFAULT_MAX_FRAME_SIZE,
        max_header_list_size: u32::MAX,
        enable_connect_protocol: false,
    };

    /// The settings `c` advertises.
    pub fn from_config(c: &Config) -> Self {
        LocalSettings {
            header_table_size: c.header_table_size,
            enable_push: c.enable_push,
            max_concurrent_streams: c.max_concurrent_streams,
            initial_window_size: c.initial_window_size,
            max_frame_size: c.max_frame_size,
            max_header_list_size: c.max_header_list_size,
            enable_connect_protocol: c.enable_connect_protocol,
        }
    }

    /// Checks the values RFC 9113 §6.5.2 bounds, which a peer would answer
    /// with a connection error: SETTINGS_INITIAL_WINDOW_SIZE at most
    /// 2^31-1, SETTINGS_MAX_FRAME_SIZE from 2^14 to 2^24-1 (ENABLE_PUSH's 0
    /// or 1 is a `bool` here). The one check of what we advertise: for a
    /// `Config` a connection starts with ([`Config::check`]), for
    /// `Connection::update_settings`, and for a front end that reads
    /// settings from its user.
    pub fn check(&self) -> Result<(), UserError> {
        let within = |name, value, min, max| {
            if (min..=max).contains(&value) {
                Ok(())
            } else {
                Err(UserError::InvalidSetting {
                    name,
                    value,
                    min,
                    max,
                })
            }
        };
        within(
            "SETTINGS_INITIAL_WINDOW_SIZE",
            self.initial_window_size,
            0,
            MAX_WINDOW_SIZE,
        )?;
        within(
            "SETTINGS_MAX_FRAME_SIZE",
            self.max_frame_size,
            DEFAULT_MAX_FRAME_SIZE,
            MAX_FRAME_SIZE_LIMIT,
        )
    }

    /// The SETTINGS frame carrying every value, so a trace shows them all.
    /// ENABLE_PUSH only from a client: a server may not send 1 (§6.5.2).
    pub(crate) fn frame(&self, is_client: bool) -> Settings {
        let mut values = vec![Setting::HeaderTableSize(self.header_table_size)];
        if is_client {
            values.push(Setting::EnablePush(self.enable_push));
        }
        values.extend([
            Setting::MaxConcurrentStreams(self.max_concurrent_streams),
            Setting::InitialWindowSize(self.initial_window_size),
            Setting::MaxFrameSize(self.max_frame_size),
            Setting::MaxHeaderListSize(self.max_header_list_size),
        ]);
        // RFC 8441 §3: only a value of 1 says anything (absence means 0), and
        // a sender must never go back from 1 to 0, so it is sent only when on.
        if self.enable_connect_protocol {
            values.push(Setting::EnableConnectProtocol(true));
        }
        Settings { ack: false, values }
    }

    /// What we must accept while `next` is in flight: the peer may act on new
    /// values the moment it reads them, before its ACK reaches us, so sizes
    /// that grow apply at once and sizes that shrink only once acknowledged.
    /// Limits of our own (streams, header list) apply at once either way: a
    /// peer caught out by them gets a retryable refusal.
    fn widen(self, next: LocalSettings) -> LocalSettings {
        LocalSettings {
            header_table_size: self.header_table_size.max(next.header_table_size),
            initial_window_size: self.initial_window_size.max(next.initial_window_size),
            max_frame_size: self.max_frame_size.max(next.max_frame_size),
            // A push promised before the peer read ENABLE_PUSH = 0 is legal
            // until it acknowledges that setting (§6.5.2).
            enable_push: self.enable_push || next.enable_push,
            ..next
        }
    }
}

/// Our SETTINGS in flight and the values in force.
#[derive(Debug)]
pub(crate) struct Local {
    /// An ACK has arrived at least once.
    acked_once: bool,
    in_flight: VecDeque<(Instant, LocalSettings)>,
    /// What the connection enforces now.
    pub(crate) effective: LocalSettings,
}

impl Local {
    pub(crate) fn new() -> Self {
        Local {
            acked_once: false,
            in_flight: VecDeque::new(),
            effective: LocalSettings::RFC_DEFAULTS,
        }
    }

    /// Gives back the in-flight queue's capacity once it is empty.
    pub(crate) fn trim(&mut self) {
        self.in_flight.trim();
    }

    /// We are sending `next`; the peer must acknowledge it by `deadline`.
    pub(crate) fn send(&mut self, next: LocalSettings, deadline: Instant) {
        self.in_flight.push_back((deadline, next));
        self.effective = self.effective.widen(next);
    }

    /// The peer acknowledged our oldest SETTINGS in flight; false if none was.
    pub(crate) fn ack(&mut self) -> bool {
        let Some((_, acked)) = self.in_flight.pop_front() else {
            return false;
        };
        self.acked_once = true;
        self.effective = self
            .in_flight
            .iter()
            .fold(acked, |values, (_, next)| values.widen(*next));
        true
    }

    /// Our first SETTINGS is still unacknowledged: the peer may not know
    /// our limits yet.
    pub(crate) fn awaiting_first_ack(&self) -> bool {
        !self.acked_once
    }

    /// When the oldest unacknowledged SETTINGS times out.
    pub(crate) fn deadline(&self) -> Option<Instant> {
        self.in_flight.front().map(|(deadline, _)| *deadline)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// RFC 8441 §3: SETTINGS_ENABLE_CONNECT_PROTOCOL (0x8) = 1 when enabled,
    /// and not sent at all otherwise (its absence means 0).
    #[test]
    fn enable_connect_protocol_is_sent_only_when_on() {
        let has = |s: &LocalSettings| {
            s.frame(false)
                .values
                .iter()
                .find(|v| v.id() == Setting::ENABLE_CONNECT_PROTOCOL)
                .map(Setting::value)
        };
        let mut config = Config::default();
        assert_eq!(has(&LocalSettings::from_config(&config)), None);
        config.enable_connect_protocol = true;
        let on = LocalSettings::from_config(&config);
        assert_eq!(has(&on), Some(1));
        let mut back = Config::default();
        back.set_local_settings(on);
        assert!(back.enable_connect_protocol);
    }

    #[test]
    fn growth_applies_at_once_shrinking_on_ack() {
        let now = Instant::now();
        let mut local = Local::new();
        let big = LocalSettings {
            initial_window_size: 1 << 20,
            max_concurrent_streams: 10,
            ..LocalSettings::RFC_DEFAULTS
        };
        local.send(big, now);
        assert_eq!(local.effective.initial_window_size, 1 << 20);
        assert_eq!(local.effective.max_concurrent_streams, 10);
        assert!(local.ack());
        let small = LocalSettings {
            initial_window_size: 1000,
            ..big
        };
        local.send(small, now + Duration::from_secs(1));
        assert_eq!(local.effective.initial_window_size, 1 << 20, "until acked");
        assert_eq!(local.deadline(), Some(now + Duration::from_secs(1)));
        assert!(local.ack());
        assert_eq!(local.effective.initial_window_size, 1000);
        assert!(!local.ack(), "nothing left in flight");
        assert_eq!(local.deadline(), None);
    }
}
