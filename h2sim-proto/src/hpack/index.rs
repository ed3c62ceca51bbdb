//! The encoder's view of the tables: the dynamic table plus hash maps that
//! find a field's best index in O(1) instead of scanning the table.

use std::collections::HashMap;

use crate::hash::FastState;
use std::ops::Range;
use std::sync::LazyLock;

use bytes::Bytes;

use super::table::{DynamicTable, Entry, STATIC_LEN, STATIC_TABLE};

/// Static table names → the range of wire indices holding that name. Names
/// with several entries (`:method`, `:status`, …) are contiguous in
/// Appendix A, so a range is enough.
static STATIC_NAMES: LazyLock<HashMap<&'static [u8], Range<usize>, FastState>> =
    LazyLock::new(|| {
        let mut names: HashMap<&'static [u8], Range<usize>, FastState> = HashMap::default();
        for (i, &(name, _)) in STATIC_TABLE.iter().enumerate() {
            let index = i + 1;
            names.entry(name).or_insert(index..index).end = index + 1;
        }
        names
    });

/// Best way to refer to a field through the tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Match {
    /// This wire index holds the exact name and value.
    Full(usize),
    /// This wire index holds the name (with another value).
    Name(usize),
    None,
}

/// Entries of one name in the dynamic table, by sequence number.
#[derive(Debug, Clone)]
struct NameEntries {
    /// The newest entry with this name: the smallest index, so the shortest
    /// encoding of a name reference.
    newest: u64,
    /// The newest entry for each value.
    values: HashMap<Bytes, u64, FastState>,
}

/// The encoder's dynamic table with its lookup maps.
///
/// The maps key on sequence numbers, which stay put while wire indices
/// shift with every insertion; an entry's current index is computed on
/// lookup. They are updated on insertion and, through the table's eviction
/// callback, on eviction, so they never point at evicted entries.
#[derive(Debug, Clone)]
pub(crate) struct TableIndex {
    table: DynamicTable,
    names: HashMap<Bytes, NameEntries, FastState>,
}

impl TableIndex {
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            table: DynamicTable::new(capacity),
            names: HashMap::default(),
        }
    }

    pub(crate) fn table(&self) -> &DynamicTable {
        &self.table
    }

    /// The best match for `name: value`: an exact match if any (static
    /// first, since static indices are smaller), else the smallest index
    /// with that name.
    pub(crate) fn find(&self, name: &[u8], value: &[u8]) -> Match {
        let mut name_index = None;
        if let Some(range) = STATIC_NAMES.get(name) {
            for index in range.clone() {
                if STATIC_TABLE
                    .get(index - 1)
                    .is_some_and(|&(_, v)| v == value)
                {
                    return Match::Full(index);
                }
            }
            name_index = Some(range.start);
        }
        if let Some(entries) = self.names.get(name) {
            let full = entries
                .values
                .get(value)
                .and_then(|&seq| self.wire_index(seq));
            if let Some(index) = full {
                return Match::Full(index);
            }
            name_index = name_index.or_else(|| self.wire_index(entries.newest));
        }
        name_index.map_or(Match::None, Match::Name)
    }

    fn wire_index(&self, seq: u64) -> Option<usize> {
        self.table.index_of_seq(seq).map(|i| STATIC_LEN + i)
    }

    /// Adds an entry, evicting as needed (§4.4).
    pub(crate) fn insert(&mut self, name: Bytes, value: Bytes) {
        let seq = self.table.next_seq();
        let names = &mut self.names;
        let entry = Entry {
            name: name.clone(),
            value: value.clone(),
        };
        self.table
            .insert(entry, |seq, evicted| forget(names, seq, evicted));
        if self.table.next_seq() > seq {
            let entries = names.entry(name).or_insert_with(|| NameEntries {
                newest: seq,
                values: HashMap::default(),
            });
            entries.newest = seq;
            entries.values.insert(value, seq);
        }
    }

    /// Changes the table's maximum size, evicting as needed (§4.3).
    pub(crate) fn set_capacity(&mut self, capacity: usize) {
        let names = &mut self.names;
        self.table
            .set_capacity(capacity, |seq, evicted| forget(names, seq, evicted));
    }
}

/// Drops the map entries that point at the evicted entry `seq`. Entries
/// are evicted oldest first, so if a name's or value's newest entry is the
/// evicted one, no other entry for it remains.
fn forget(names: &mut HashMap<Bytes, NameEntries, FastState>, seq: u64, evicted: Entry) {
    let Some(entries) = names.get_mut(&evicted.name) else {
        return;
    };
    if entries.values.get(&evicted.value) == Some(&seq) {
        entries.values.remove(&evicted.value);
    }
    if entries.newest == seq {
        names.remove(&evicted.name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn static_matches() {
        let index = TableIndex::new(4096);
        assert_eq!(index.find(b":method", b"POST"), Match::Full(3));
        assert_eq!(index.find(b":method", b"PUT"), Match::Name(2));
        assert_eq!(index.find(b":status", b"500"), Match::Full(14));
        assert_eq!(
            index.find(b"accept-encoding", b"gzip, deflate"),
            Match::Full(16)
        );
        assert_eq!(index.find(b"www-authenticate", b""), Match::Full(61));
        assert_eq!(index.find(b"x-custom", b""), Match::None);
    }

    #[test]
    fn dynamic_matches_follow_insertions_and_evictions() {
        // Room for two entries of size 34.
        let mut index = TableIndex::new(68);
        index.insert(Bytes::from("a"), Bytes::from("1"));
        assert_eq!(index.find(b"a", b"1"), Match::Full(62));
        index.insert(Bytes::from("a"), Bytes::from("2"));
        assert_eq!(index.find(b"a", b"1"), Match::Full(63));
        assert_eq!(index.find(b"a", b"2"), Match::Full(62));
        assert_eq!(index.find(b"a", b"3"), Match::Name(62));
        // Evicts "a: 1".
        index.insert(Bytes::from("b"), Bytes::from("1"));
        assert_eq!(index.find(b"a", b"1"), Match::Name(63));
        assert_eq!(index.find(b"b", b"1"), Match::Full(62));
        // Static names win over dynamic ones.
        index.insert(Bytes::from("age"), Bytes::from("1"));
        assert_eq!(index.find(b"age", b"2"), Match::Name(21));
        assert_eq!(index.find(b"age", b"1"), Match::Full(62));
        index.set_capacity(0);
        assert_eq!(index.find(b"b", b"1"), Match::None);
        assert!(index.names.is_empty());
    }
}
