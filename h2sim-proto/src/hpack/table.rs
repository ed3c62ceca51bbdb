//! The static table (RFC 7541 §2.3.1, Appendix A) and the dynamic table
//! (§2.3.2, §4).

use std::collections::VecDeque;

use bytes::Bytes;

/// Number of entries in the static table; dynamic entries are addressed
/// from `STATIC_LEN + 1` on (§2.3.3).
pub(crate) const STATIC_LEN: usize = 61;

/// The static table, Appendix A. Index `i` (1-based on the wire) is
/// `STATIC_TABLE[i - 1]`. Plain `&'static [u8]` so that handing an entry out
/// is a `Bytes::from_static`, which neither allocates nor counts references.
pub(crate) static STATIC_TABLE: [(&[u8], &[u8]); STATIC_LEN] = [
    (b":authority", b""),
    (b":method", b"GET"),
    (b":method", b"POST"),
    (b":path", b"/"),
    (b":path", b"/index.html"),
    (b":scheme", b"http"),
    (b":scheme", b"https"),
    (b":status", b"200"),
    (b":status", b"204"),
    (b":status", b"206"),
    (b":status", b"304"),
    (b":status", b"400"),
    (b":status", b"404"),
    (b":status", b"500"),
    (b"accept-charset", b""),
    (b"accept-encoding", b"gzip, deflate"),
    (b"accept-language", b""),
    (b"accept-ranges", b""),
    (b"accept", b""),
    (b"access-control-allow-origin", b""),
    (b"age", b""),
    (b"allow", b""),
    (b"authorization", b""),
    (b"cache-control", b""),
    (b"content-disposition", b""),
    (b"content-encoding", b""),
    (b"content-language", b""),
    (b"content-length", b""),
    (b"content-location", b""),
    (b"content-range", b""),
    (b"content-type", b""),
    (b"cookie", b""),
    (b"date", b""),
    (b"etag", b""),
    (b"expect", b""),
    (b"expires", b""),
    (b"from", b""),
    (b"host", b""),
    (b"if-match", b""),
    (b"if-modified-since", b""),
    (b"if-none-match", b""),
    (b"if-range", b""),
    (b"if-unmodified-since", b""),
    (b"last-modified", b""),
    (b"link", b""),
    (b"location", b""),
    (b"max-forwards", b""),
    (b"proxy-authenticate", b""),
    (b"proxy-authorization", b""),
    (b"range", b""),
    (b"referer", b""),
    (b"refresh", b""),
    (b"retry-after", b""),
    (b"server", b""),
    (b"set-cookie", b""),
    (b"strict-transport-security", b""),
    (b"transfer-encoding", b""),
    (b"user-agent", b""),
    (b"vary", b""),
    (b"via", b""),
    (b"www-authenticate", b""),
];

/// Per-entry overhead counted in an entry's size (§4.1), an estimate of the
/// bookkeeping an implementation needs per entry.
pub(crate) const ENTRY_OVERHEAD: usize = 32;

/// Size of an entry per §4.1, saturating so that absurd lengths cannot
/// overflow (such an entry never fits any table anyway).
pub(crate) fn entry_size(name: &[u8], value: &[u8]) -> usize {
    name.len()
        .saturating_add(value.len())
        .saturating_add(ENTRY_OVERHEAD)
}

/// One dynamic table entry. `Bytes` so that emitting it as a decoded field,
/// or keeping it as a lookup key, is a reference count bump, not a copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub(crate) name: Bytes,
    pub(crate) value: Bytes,
}

/// The dynamic table: a FIFO of entries bounded by a size in §4.1 units.
///
/// Entries are also numbered by insertion order ("sequence numbers"),
/// which, unlike wire indices, do not shift when entries are added; the
/// encoder's lookup index stores them and converts back with
/// [`DynamicTable::index_of_seq`].
#[derive(Debug, Clone)]
pub(crate) struct DynamicTable {
    /// Oldest entry at the front, newest at the back.
    entries: VecDeque<Entry>,
    /// Sum of the entries' sizes; never above `capacity`.
    size: usize,
    /// Maximum size currently in force (set by a size update on the wire).
    capacity: usize,
    /// Number of entries evicted so far, which is the sequence number of
    /// the oldest entry still present.
    evicted: u64,
}

impl DynamicTable {
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            entries: VecDeque::new(),
            size: 0,
            capacity,
            evicted: 0,
        }
    }

    pub(crate) fn size(&self) -> usize {
        self.size
    }

    pub(crate) fn capacity(&self) -> usize {
        self.capacity
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// The entry at 1-based dynamic index `index` (1 = newest), i.e. wire
    /// index `STATIC_LEN + index`.
    pub(crate) fn get(&self, index: usize) -> Option<&Entry> {
        let pos = self.entries.len().checked_sub(index)?;
        if index == 0 {
            return None;
        }
        self.entries.get(pos)
    }

    /// Entries from newest to oldest, i.e. in wire index order.
    pub(crate) fn iter(&self) -> impl ExactSizeIterator<Item = &Entry> {
        self.entries.iter().rev()
    }

    /// Sequence number the next inserted entry will get.
    pub(crate) fn next_seq(&self) -> u64 {
        self.evicted + self.entries.len() as u64
    }

    /// 1-based dynamic index of the entry with sequence number `seq`, if it
    /// is still present.
    pub(crate) fn index_of_seq(&self, seq: u64) -> Option<usize> {
        if seq < self.evicted {
            return None;
        }
        let from_newest = self.next_seq().checked_sub(seq)?;
        usize::try_from(from_newest)
            .ok()
            .filter(|&i| i >= 1 && i <= self.entries.len())
    }

    /// Changes the maximum size, evicting oldest entries until the rest fits
    /// (§4.3). `on_evict` sees each evicted entry with its sequence number.
    pub(crate) fn set_capacity(&mut self, capacity: usize, on_evict: impl FnMut(u64, Entry)) {
        self.capacity = capacity;
        self.evict_to(capacity, on_evict);
    }

    /// Adds an entry, first evicting until it fits (§4.4). An entry larger
    /// than the whole table empties the table and is not added; that is not
    /// an error.
    pub(crate) fn insert(&mut self, entry: Entry, mut on_evict: impl FnMut(u64, Entry)) {
        let size = entry_size(&entry.name, &entry.value);
        match self.capacity.checked_sub(size) {
            Some(room) => {
                self.evict_to(room, &mut on_evict);
                self.size += size;
                self.entries.push_back(entry);
            }
            None => self.evict_to(0, &mut on_evict),
        }
    }

    fn evict_to(&mut self, target: usize, mut on_evict: impl FnMut(u64, Entry)) {
        while self.size > target {
            let Some(entry) = self.entries.pop_front() else {
                break;
            };
            self.size -= entry_size(&entry.name, &entry.value);
            on_evict(self.evicted, entry);
            self.evicted += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn entry(name: &'static str, value: &'static str) -> Entry {
        Entry {
            name: Bytes::from_static(name.as_bytes()),
            value: Bytes::from_static(value.as_bytes()),
        }
    }

    fn ignore(_: u64, _: Entry) {}

    #[test]
    fn static_table_spot_checks() {
        assert_eq!(STATIC_TABLE[0], (&b":authority"[..], &b""[..]));
        assert_eq!(
            STATIC_TABLE[15],
            (&b"accept-encoding"[..], &b"gzip, deflate"[..])
        );
        assert_eq!(STATIC_TABLE[60], (&b"www-authenticate"[..], &b""[..]));
    }

    #[test]
    fn indices_and_sequence_numbers() {
        let mut t = DynamicTable::new(4096);
        t.insert(entry("a", "1"), ignore);
        t.insert(entry("b", "2"), ignore);
        assert_eq!(t.get(1).unwrap(), &entry("b", "2"));
        assert_eq!(t.get(2).unwrap(), &entry("a", "1"));
        assert_eq!(t.get(0), None);
        assert_eq!(t.get(3), None);
        assert_eq!(t.index_of_seq(0), Some(2));
        assert_eq!(t.index_of_seq(1), Some(1));
        assert_eq!(t.index_of_seq(2), None);
        assert_eq!(t.size(), 2 * 34);
    }

    #[test]
    fn eviction_reports_sequence_numbers() {
        // Room for exactly two 34-byte entries.
        let mut t = DynamicTable::new(68);
        let mut evicted = Vec::new();
        for (n, v) in [("a", "1"), ("b", "2"), ("c", "3")] {
            t.insert(entry(n, v), |seq, e| evicted.push((seq, e)));
        }
        assert_eq!(evicted, vec![(0, entry("a", "1"))]);
        assert_eq!(t.len(), 2);
        assert_eq!(t.index_of_seq(0), None);
        assert_eq!(t.index_of_seq(2), Some(1));
        t.set_capacity(40, |seq, e| evicted.push((seq, e)));
        assert_eq!(evicted[1], (1, entry("b", "2")));
        assert_eq!(t.size(), 34);
    }

    #[test]
    fn oversized_entry_empties_table() {
        let mut t = DynamicTable::new(40);
        t.insert(entry("a", "1"), ignore);
        t.insert(entry("a-much-longer-name", "1"), ignore);
        assert_eq!(t.len(), 0);
        assert_eq!(t.size(), 0);
        assert_eq!(t.next_seq(), 1);
    }
}
