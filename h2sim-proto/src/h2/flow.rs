//! Flow-control windows (RFC 9113 §5.2, §6.9).

use crate::frame::MAX_WINDOW_SIZE;

/// A flow-control window. Signed, because a lowered
/// SETTINGS_INITIAL_WINDOW_SIZE can leave a stream owing bytes (§6.9.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Window(i64);

/// A window would pass 2^31-1: FLOW_CONTROL_ERROR (§6.9.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Overflow;

impl Window {
    pub(crate) fn new(size: u32) -> Self {
        Window(i64::from(size))
    }

    /// What may be sent (or received) now; zero while the window is negative.
    pub(crate) fn available(self) -> u32 {
        u32::try_from(self.0.max(0)).unwrap_or(u32::MAX)
    }

    pub(crate) fn value(self) -> i64 {
        self.0
    }

    /// Adds credit (WINDOW_UPDATE, or a settings change when `delta` < 0).
    pub(crate) fn adjust(&mut self, delta: i64) -> Result<(), Overflow> {
        let next = self.0 + delta;
        if next > i64::from(MAX_WINDOW_SIZE) {
            return Err(Overflow);
        }
        self.0 = next;
        Ok(())
    }

    /// Spends credit: the caller has checked `available()` or, on receive,
    /// that the peer stayed within it.
    pub(crate) fn consume(&mut self, n: u32) {
        self.0 -= i64::from(n);
    }
}

/// The receive side of a window: credit the peer still has, and bytes the
/// application has released but we have not yet announced with WINDOW_UPDATE.
/// Updates are batched until half the target window is owed, so a stream of
/// small DATA frames does not cost one WINDOW_UPDATE each.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RecvWindow {
    pub(crate) window: Window,
    /// Received bytes not yet released by the application.
    pub(crate) unreleased: u32,
    /// Released bytes not yet announced.
    pub(crate) owed: u32,
    /// The window size we want the peer to see.
    pub(crate) target: u32,
}

impl RecvWindow {
    pub(crate) fn new(initial: u32, target: u32) -> Self {
        RecvWindow {
            window: Window::new(initial),
            unreleased: 0,
            owed: 0,
            target,
        }
    }

    /// Takes `flow_len` bytes of DATA, of which `kept` reach the application;
    /// padding is released at once. Err when the peer overran the window.
    /// An empty frame takes nothing, so it overruns nothing, even a window
    /// that our lowered SETTINGS_INITIAL_WINDOW_SIZE made negative: the
    /// peer may end a stream with one when no space is left (RFC 9113
    /// §6.9.1).
    pub(crate) fn receive(&mut self, flow_len: u32, kept: u32) -> Result<(), i64> {
        if flow_len > 0 && i64::from(flow_len) > self.window.value() {
            return Err(self.window.value());
        }
        self.window.consume(flow_len);
        self.unreleased += kept;
        self.owed += flow_len - kept;
        Ok(())
    }

    /// The application is done with `n` bytes. Returns false if it released
    /// more than it received.
    pub(crate) fn release(&mut self, n: u32) -> bool {
        let Some(left) = self.unreleased.checked_sub(n) else {
            return false;
        };
        self.unreleased = left;
        self.owed += n;
        true
    }

    /// Bytes to announce in a WINDOW_UPDATE now, once at least half the
    /// target is owed, and records them as announced. The window plus the
    /// unreleased and owed bytes always add up to the target, so the window
    /// never passes the target and cannot overflow.
    pub(crate) fn take_update(&mut self) -> Option<u32> {
        if self.owed == 0 || self.owed < self.target / 2 {
            return None;
        }
        let increment = self.owed;
        self.owed = 0;
        self.window.0 += i64::from(increment);
        Some(increment)
    }

    /// Raises the target of a window that no setting governs (the
    /// connection's, §6.9.2) and returns the increment to announce at once.
    pub(crate) fn grow(&mut self, target: u32) -> u32 {
        let increment = target.saturating_sub(self.target);
        self.target += increment;
        self.window.0 += i64::from(increment);
        increment
    }

    /// Sets a new target (our SETTINGS_INITIAL_WINDOW_SIZE took effect) and
    /// moves the window by the difference, as the peer does (§6.9.2).
    pub(crate) fn retarget(&mut self, target: u32) {
        self.window.0 += i64::from(target) - i64::from(self.target);
        self.target = target;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overflow_detected() {
        let mut w = Window::new(MAX_WINDOW_SIZE);
        assert_eq!(w.adjust(1), Err(Overflow));
        assert_eq!(w.adjust(-10), Ok(()));
        assert_eq!(w.available(), MAX_WINDOW_SIZE - 10);
    }

    #[test]
    fn negative_window_has_nothing_available() {
        let mut w = Window::new(10);
        w.adjust(-20).unwrap();
        assert_eq!(w.available(), 0);
        assert_eq!(w.value(), -10);
    }

    #[test]
    fn an_empty_frame_fits_a_negative_window() {
        let mut r = RecvWindow::new(10, 10);
        r.receive(10, 10).unwrap();
        r.retarget(0);
        assert_eq!(r.receive(0, 0), Ok(()));
        assert_eq!(r.receive(1, 1), Err(-10));
    }

    #[test]
    fn updates_batched_until_half_owed() {
        let mut r = RecvWindow::new(100, 100);
        r.receive(30, 30).unwrap();
        assert!(r.release(30));
        assert_eq!(r.take_update(), None, "30 of 100 owed: wait");
        r.receive(30, 30).unwrap();
        assert!(r.release(30));
        assert_eq!(r.take_update(), Some(60));
        assert_eq!(r.window.value(), 100);
    }

    #[test]
    fn overrun_rejected() {
        let mut r = RecvWindow::new(10, 10);
        assert_eq!(r.receive(11, 11), Err(10));
        assert!(!r.release(1));
    }

    #[test]
    fn padding_released_at_once() {
        let mut r = RecvWindow::new(100, 100);
        r.receive(60, 0).unwrap();
        assert_eq!(r.take_update(), Some(60));
    }
}
