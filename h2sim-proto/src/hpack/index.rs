//! The encoder's view of the tables: the dynamic table plus hash maps that
//! find a field's best index in O(1) instead of scanning the table.

use std::collections::HashMap;

use crate::hash::FastState;
use std::ops::Range;

use bytes::Bytes;

use super::table::{DynamicTable, Entry, STATIC_LEN, STATIC_TABLE};

/// Static table names → the range of wire indices holding that name. Names
/// with several entries (`:method`, `:status`, …) are contiguous in
/// Appendix A, so a range is enough. A `match` on the bytes compiles to a
/// dispatch on length and a compare, cheaper than hashing the name.
fn static_names(name: &[u8]) -> Option<Range<usize>> {
    Some(match name {
        b":authority" => 1..2,
        b":method" => 2..4,
        b":path" => 4..6,
        b":scheme" => 6..8,
        b":status" => 8..15,
        b"accept-charset" => 15..16,
        b"accept-encoding" => 16..17,
        b"accept-language" => 17..18,
        b"accept-ranges" => 18..19,
        b"accept" => 19..20,
        b"access-control-allow-origin" => 20..21,
        b"age" => 21..22,
        b"allow" => 22..23,
        b"authorization" => 23..24,
        b"cache-control" => 24..25,
        b"content-disposition" => 25..26,
        b"content-encoding" => 26..27,
        b"content-language" => 27..28,
        b"content-length" => 28..29,
        b"content-location" => 29..30,
        b"content-range" => 30..31,
        b"content-type" => 31..32,
        b"cookie" => 32..33,
        b"date" => 33..34,
        b"etag" => 34..35,
        b"expect" => 35..36,
        b"expires" => 36..37,
        b"from" => 37..38,
        b"host" => 38..39,
        b"if-match" => 39..40,
        b"if-modified-since" => 40..41,
        b"if-none-match" => 41..42,
        b"if-range" => 42..43,
        b"if-unmodified-since" => 43..44,
        b"last-modified" => 44..45,
        b"link" => 45..46,
        b"location" => 46..47,
        b"max-forwards" => 47..48,
        b"proxy-authenticate" => 48..49,
        b"proxy-authorization" => 49..50,
        b"range" => 50..51,
        b"referer" => 51..52,
        b"refresh" => 52..53,
        b"retry-after" => 53..54,
        b"server" => 54..55,
        b"set-cookie" => 55..56,
        b"strict-transport-security" => 56..57,
        b"transfer-encoding" => 57..58,
        b"user-agent" => 58..59,
        b"vary" => 59..60,
        b"via" => 60..61,
        b"www-authenticate" => 61..62,
        _ => return None,
    })
}

/// The static entry holding exactly the pseudo-header `name: value`, if
/// there is one (Appendix A, entries 1-14): its index is the whole encoding
/// (§6.1), whatever the dynamic table holds. Every request and response
/// carries one or more, so they are matched directly, a dispatch on a few
/// bytes, not through [`static_names`].
#[inline]
pub(crate) fn static_pseudo(name: &[u8], value: &[u8]) -> Option<u8> {
    // Array patterns: a length check and a few loads each, where byte
    // string patterns would call `memcmp`.
    Some(match (name, value) {
        ([b':', b'a', b'u', b't', b'h', b'o', b'r', b'i', b't', b'y'], []) => 1,
        ([b':', b'm', b'e', b't', b'h', b'o', b'd'], [b'G', b'E', b'T']) => 2,
        ([b':', b'm', b'e', b't', b'h', b'o', b'd'], [b'P', b'O', b'S', b'T']) => 3,
        ([b':', b'p', b'a', b't', b'h'], [b'/']) => 4,
        ([b':', b'p', b'a', b't', b'h'], b"/index.html") => 5,
        ([b':', b's', b'c', b'h', b'e', b'm', b'e'], [b'h', b't', b't', b'p']) => 6,
        ([b':', b's', b'c', b'h', b'e', b'm', b'e'], [b'h', b't', b't', b'p', b's']) => 7,
        ([b':', b's', b't', b'a', b't', b'u', b's'], [a, b, c]) => match [a, b, c] {
            [b'2', b'0', b'0'] => 8,
            [b'2', b'0', b'4'] => 9,
            [b'2', b'0', b'6'] => 10,
            [b'3', b'0', b'4'] => 11,
            [b'4', b'0', b'0'] => 12,
            [b'4', b'0', b'4'] => 13,
            [b'5', b'0', b'0'] => 14,
            _ => return None,
        },
        _ => return None,
    })
}

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
    values: HashMap<Bytes, Seen, FastState>,
    /// Entries of this name evicted unused since one was evicted used.
    unused_run: u32,
}

/// The newest entry of one name and value.
#[derive(Debug, Clone, Copy)]
struct Seen {
    seq: u64,
    /// A field was sent as its index since it was added.
    used: bool,
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
    /// with that name. A dynamic exact match counts as a use of its entry
    /// (see [`TableIndex::insert`]).
    pub(crate) fn find(&mut self, name: &[u8], value: &[u8]) -> Match {
        let mut name_index = None;
        if let Some(range) = static_names(name) {
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
        if let Some(entries) = self.names.get_mut(name) {
            let table = &self.table;
            let full = entries.values.get_mut(value).and_then(|seen| {
                seen.used = true;
                wire_index(table, seen.seq)
            });
            if let Some(index) = full {
                return Match::Full(index);
            }
            name_index = name_index.or_else(|| wire_index(table, entries.newest));
        }
        name_index.map_or(Match::None, Match::Name)
    }

    /// Adds an entry, evicting as needed (§4.4). `unused` hears a name
    /// of the static table whose evicted entries went unused
    /// [`UNUSED_IN_A_ROW`] times in a row: a field of such a name refers
    /// to the static name, so its entries served nothing but repeats of
    /// their values, which did not come (a `location` with a new id in
    /// every response).
    pub(crate) fn insert(&mut self, name: Bytes, value: Bytes, mut unused: impl FnMut(&Bytes)) {
        let seq = self.table.next_seq();
        let names = &mut self.names;
        let entry = Entry {
            name: name.clone(),
            value: value.clone(),
        };
        self.table.insert(entry, |seq, evicted| {
            if forget(names, seq, &evicted) && static_names(&evicted.name).is_some() {
                unused(&evicted.name);
            }
        });
        if self.table.next_seq() > seq {
            let entries = names.entry(name).or_insert_with(|| NameEntries {
                newest: seq,
                values: HashMap::default(),
                unused_run: 0,
            });
            entries.newest = seq;
            entries.values.insert(value, Seen { seq, used: false });
        }
    }

    /// Changes the table's maximum size, evicting as needed (§4.3).
    pub(crate) fn set_capacity(&mut self, capacity: usize) {
        let names = &mut self.names;
        self.table.set_capacity(capacity, |seq, evicted| {
            forget(names, seq, &evicted);
        });
    }
}

/// The wire index of the dynamic entry `seq`, if it is still there.
fn wire_index(table: &DynamicTable, seq: u64) -> Option<usize> {
    table.index_of_seq(seq).map(|i| STATIC_LEN + i)
}

/// Evicted entries of one name that went unused, in a row, after which
/// [`TableIndex::insert`] reports the name. One is not enough: a name with
/// a few values that recur (`content-type`) leaves some unused too, and
/// indexing it only on a repeat would lose the recurrences. On the
/// hpack-test-case corpus (`examples/hpack_ratio.rs`), 8 takes 1.5% off
/// the encoding at the default table size of 4096 and adds 0.8% at 16384;
/// 1 adds 1.1% at 4096, and 4 or 6 do about as well as 8 at 4096 but
/// cost more at 16384.
const UNUSED_IN_A_ROW: u32 = 8;

/// Drops the map entries that point at the evicted entry `seq`. Entries
/// are evicted oldest first, so if a name's or value's newest entry is the
/// evicted one, no other entry for it remains. Returns whether its name
/// has now had [`UNUSED_IN_A_ROW`] entries evicted unused (an older
/// duplicate of a value, which lookups no longer find, is not counted).
fn forget(names: &mut HashMap<Bytes, NameEntries, FastState>, seq: u64, evicted: &Entry) -> bool {
    let Some(entries) = names.get_mut(&evicted.name) else {
        return false;
    };
    let mut reached = false;
    if let Some(seen) = entries.values.get(&evicted.value).copied()
        && seen.seq == seq
    {
        entries.values.remove(&evicted.value);
        entries.unused_run = if seen.used { 0 } else { entries.unused_run + 1 };
        reached = entries.unused_run == UNUSED_IN_A_ROW;
    }
    if entries.newest == seq {
        names.remove(&evicted.name);
    }
    reached
}

#[cfg(test)]
mod tests {

    /// `static_pseudo` finds exactly the pseudo-header entries of Appendix
    /// A that `find` finds in the table itself.
    #[test]
    fn static_pseudo_agrees_with_appendix_a() {
        let mut index = TableIndex::new(4096);
        for (i, &(name, value)) in STATIC_TABLE.iter().enumerate() {
            let direct = static_pseudo(name, value).map(usize::from);
            let expected = name.starts_with(b":").then_some(i + 1);
            assert_eq!(direct, expected, "{:?}", String::from_utf8_lossy(name));
            if let Some(direct) = direct {
                assert_eq!(index.find(name, value), Match::Full(direct));
            }
        }
        assert_eq!(static_pseudo(b":method", b"PUT"), None);
        assert_eq!(static_pseudo(b":status", b"201"), None);
        assert_eq!(static_pseudo(b":authority", b"a"), None);
    }

    #[test]
    fn static_names_cover_appendix_a_exactly() {
        for (i, &(name, _)) in STATIC_TABLE.iter().enumerate() {
            let range = static_names(name).expect("every static name is known");
            assert!(
                range.contains(&(i + 1)),
                "{}",
                String::from_utf8_lossy(name)
            );
            assert!(range.clone().all(|w| STATIC_TABLE[w - 1].0 == name));
        }
        assert_eq!(static_names(b"x-custom"), None);
        assert_eq!(static_names(b":Method"), None);
    }

    use super::*;

    #[test]
    fn static_matches() {
        let mut index = TableIndex::new(4096);
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
        index.insert(Bytes::from("a"), Bytes::from("1"), |_| {});
        assert_eq!(index.find(b"a", b"1"), Match::Full(62));
        index.insert(Bytes::from("a"), Bytes::from("2"), |_| {});
        assert_eq!(index.find(b"a", b"1"), Match::Full(63));
        assert_eq!(index.find(b"a", b"2"), Match::Full(62));
        assert_eq!(index.find(b"a", b"3"), Match::Name(62));
        // Evicts "a: 1".
        index.insert(Bytes::from("b"), Bytes::from("1"), |_| {});
        assert_eq!(index.find(b"a", b"1"), Match::Name(63));
        assert_eq!(index.find(b"b", b"1"), Match::Full(62));
        // Static names win over dynamic ones.
        index.insert(Bytes::from("age"), Bytes::from("1"), |_| {});
        assert_eq!(index.find(b"age", b"2"), Match::Name(21));
        assert_eq!(index.find(b"age", b"1"), Match::Full(62));
        index.set_capacity(0);
        assert_eq!(index.find(b"b", b"1"), Match::None);
        assert!(index.names.is_empty());
    }
}
