//! Counters a connection keeps for reports (h2load-style traffic lines).

/// What crossed one connection.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Bytes taken from and handed to the transport.
    pub bytes_received: u64,
    pub bytes_sent: u64,
    /// Field sections received: encoded size on the wire (HEADERS,
    /// PUSH_PROMISE and CONTINUATION payloads, or HTTP/1.1 heads) and decoded
    /// size (name and value octets); their ratio is what HPACK saved.
    pub header_wire_bytes_received: u64,
    pub header_bytes_received: u64,
    /// The same for field sections sent.
    pub header_wire_bytes_sent: u64,
    pub header_bytes_sent: u64,
    /// Body bytes (DATA payloads), each way.
    pub data_bytes_received: u64,
    pub data_bytes_sent: u64,
    /// Of `data_bytes_sent`, the bodies of the answers a server's core
    /// gave in the application's place (a 413 for a body above
    /// `Config::max_request_body`, HTTP/1.1's error statuses): an
    /// application that compares the bodies it gave with what was
    /// written leaves these out, as it never gave them.
    pub own_data_bytes_sent: u64,
}

impl Stats {
    /// What was counted after `earlier`, a snapshot of the same
    /// connection's counters.
    pub fn since(&self, earlier: &Stats) -> Stats {
        Stats {
            bytes_received: self.bytes_received.saturating_sub(earlier.bytes_received),
            bytes_sent: self.bytes_sent.saturating_sub(earlier.bytes_sent),
            header_wire_bytes_received: self
                .header_wire_bytes_received
                .saturating_sub(earlier.header_wire_bytes_received),
            header_bytes_received: self
                .header_bytes_received
                .saturating_sub(earlier.header_bytes_received),
            header_wire_bytes_sent: self
                .header_wire_bytes_sent
                .saturating_sub(earlier.header_wire_bytes_sent),
            header_bytes_sent: self
                .header_bytes_sent
                .saturating_sub(earlier.header_bytes_sent),
            data_bytes_received: self
                .data_bytes_received
                .saturating_sub(earlier.data_bytes_received),
            data_bytes_sent: self.data_bytes_sent.saturating_sub(earlier.data_bytes_sent),
            own_data_bytes_sent: self
                .own_data_bytes_sent
                .saturating_sub(earlier.own_data_bytes_sent),
        }
    }

    /// Adds another connection's counters.
    pub fn merge(&mut self, other: &Stats) {
        self.bytes_received += other.bytes_received;
        self.bytes_sent += other.bytes_sent;
        self.header_wire_bytes_received += other.header_wire_bytes_received;
        self.header_bytes_received += other.header_bytes_received;
        self.header_wire_bytes_sent += other.header_wire_bytes_sent;
        self.header_bytes_sent += other.header_bytes_sent;
        self.data_bytes_received += other.data_bytes_received;
        self.data_bytes_sent += other.data_bytes_sent;
        self.own_data_bytes_sent += other.own_data_bytes_sent;
    }
}
