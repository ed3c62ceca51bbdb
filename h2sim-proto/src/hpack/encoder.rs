//! The HPACK encoder (RFC 7541 §3, §6): header list → header block.

use bytes::{BufMut, Bytes, BytesMut};

use super::field::{FieldRef, HeaderField};
use super::huffman;
use super::index::{Match, TableIndex, static_pseudo};
use super::integer;
use super::sent_memo::SentMemo;

/// Dynamic table size the encoder starts with: the HTTP/2 default of
/// SETTINGS_HEADER_TABLE_SIZE (RFC 9113 §6.5.2).
pub const DEFAULT_TABLE_SIZE: usize = 4096;

/// The most dynamic table the encoder will use, whatever the peer allows.
/// The encoder may use less than the peer's limit (§4.2); without a cap, a
/// peer advertising 4 GiB would let our table grow with every distinct
/// field we send. 64 KiB, sixteen times the default, is far more than the
/// header sets of a connection usually need.
pub const MAX_ENCODER_TABLE_SIZE: usize = 64 * 1024;

/// Values of `cookie` shorter than this are sent never-indexed by the
/// [`Selective`](IndexingPolicy::Selective) policy: short cookies have
/// little entropy, so an attacker able to inject headers on the same
/// connection could guess them from the compressed size (§7.1.3).
pub const MIN_INDEXED_COOKIE_LEN: usize = 20;

/// Which fields the encoder adds to the dynamic table.
///
/// Fields marked [`sensitive`](HeaderField#structfield.sensitive) are sent
/// as never-indexed literals under every policy, and no policy adds an entry
/// larger than the whole table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IndexingPolicy {
    /// The default. Besides sensitive fields, sends `authorization`,
    /// `proxy-authorization` and short `cookie` values (see
    /// [`MIN_INDEXED_COOKIE_LEN`]) never-indexed, as §7.1.3 advises.
    /// Indexes fields whose values are nearly always unique (`:path`,
    /// `content-length`, `age`, and names of the static table whose
    /// entries the connection saw evicted unused, several in a row, like a
    /// `location` with a new id in every response), which would only push
    /// reusable entries out of the table, only once a value repeats the
    /// last one sent under its name (a client's requests of one body size,
    /// a polled path); never indexes fields taking more than three quarters
    /// of the table, which would evict almost everything else.
    #[default]
    Selective,
    /// Indexes every field that fits in the table, as the examples of
    /// RFC 7541 Appendix C do; useful to reproduce them or to emulate
    /// simple encoders.
    All,
}

/// Compression context for one direction of one connection.
#[derive(Debug, Clone)]
pub struct Encoder {
    index: TableIndex,
    /// Smallest table size set since the last block, if it was changed:
    /// the next block must announce it (§4.2).
    pending_min: Option<usize>,
    /// The table size the peer's decoder currently has in force.
    signaled: usize,
    huffman: bool,
    policy: IndexingPolicy,
    /// The last block's fields, made in a box when first needed.
    memo: Option<Box<SentMemo>>,
    /// The usually-unique names and the last value sent under each, made
    /// when first needed. Unlike the memo it decides what is sent, so a
    /// trim keeps it (it is small: a few names and short values).
    uniques: Option<Box<Uniques>>,
}

impl Default for Encoder {
    fn default() -> Self {
        Self::new()
    }
}

impl Encoder {
    /// An encoder with the HTTP/2 default table size of 4096, Huffman
    /// coding and the [`Selective`](IndexingPolicy::Selective) policy.
    pub fn new() -> Self {
        Self {
            index: TableIndex::new(DEFAULT_TABLE_SIZE),
            pending_min: None,
            signaled: DEFAULT_TABLE_SIZE,
            huffman: true,
            policy: IndexingPolicy::default(),
            memo: None,
            uniques: None,
        }
    }

    /// Forgets the last block (an idle connection keeps only its table).
    pub fn trim(&mut self) {
        self.memo = None;
    }

    /// The peer's SETTINGS_HEADER_TABLE_SIZE changed to `size`: the table
    /// (capped at [`MAX_ENCODER_TABLE_SIZE`]) is resized and evicted now,
    /// and the next block starts with dynamic table size updates — the
    /// smallest size set since the last block if that is below the final
    /// one, then the final one (§4.2).
    pub fn set_max_table_size(&mut self, size: usize) {
        let size = size.min(MAX_ENCODER_TABLE_SIZE);
        self.memo = None;
        self.pending_min = Some(self.pending_min.map_or(size, |min| min.min(size)));
        self.index.set_capacity(size);
    }

    /// Whether to Huffman-code strings that get shorter that way (the
    /// default) or to send every string raw.
    pub fn set_huffman(&mut self, enabled: bool) {
        self.memo = None;
        self.huffman = enabled;
    }

    /// Chooses which fields are added to the dynamic table.
    pub fn set_indexing_policy(&mut self, policy: IndexingPolicy) {
        self.memo = None;
        self.policy = policy;
    }

    /// The dynamic table's maximum size in force.
    pub fn table_capacity(&self) -> usize {
        self.index.table().capacity()
    }

    /// Sum of the §4.1 sizes of the dynamic table's entries.
    pub fn table_size(&self) -> usize {
        self.index.table().size()
    }

    /// The dynamic table's entries as `(name, value)`, newest first. Equal
    /// to the peer decoder's [`table_entries`](super::Decoder::table_entries)
    /// after each block.
    pub fn table_entries(&self) -> impl ExactSizeIterator<Item = (&Bytes, &Bytes)> {
        self.index.table().iter().map(|e| (&e.name, &e.value))
    }

    /// Encodes `fields`, in order, as one header block appended to `dst`.
    pub fn encode<'a>(
        &mut self,
        fields: impl IntoIterator<Item = &'a HeaderField>,
        dst: &mut BytesMut,
    ) {
        self.encode_refs(fields.into_iter().map(FieldRef::from), dst);
    }

    /// [`Encoder::encode`] of borrowed fields; returns the octets of their
    /// names and values (counted here, in the one pass over them).
    pub(crate) fn encode_refs<'a>(
        &mut self,
        fields: impl IntoIterator<Item = FieldRef<'a>>,
        dst: &mut BytesMut,
    ) -> usize {
        if let Some(min) = self.pending_min.take() {
            let size = self.table_capacity();
            if min < size {
                integer::encode(min, 5, 0b0010_0000, dst);
            }
            if min < size || size != self.signaled {
                integer::encode(size, 5, 0b0010_0000, dst);
            }
            self.signaled = size;
        }
        // A pseudo-header with an exact static entry (`:method: GET`,
        // `:status: 200`) is one octet, written at once: no policy makes it
        // anything else unless it is sensitive, and the memo neither sees
        // nor keeps it. Fields that repeat the last block's other fields in
        // the same place are copied from the memo; the rest are encoded
        // (and remembered there).
        let mut memo = self.memo.take().unwrap_or_default();
        let mut cursor = memo.start();
        let mut octets = 0;
        for field in fields {
            octets += field.name.len() + field.value.len();
            if !field.sensitive
                && let Some(index) = static_pseudo(field.name, field.value)
            {
                // §6.1 indexed header field: a static index fits the prefix.
                memo.flush(&mut cursor, dst);
                dst.put_u8(0b1000_0000 | index);
                continue;
            }
            if memo.take(&mut cursor, field) {
                continue;
            }
            memo.flush(&mut cursor, dst);
            let (before, seq) = (dst.len(), self.index.table().next_seq());
            let reusable = self.encode_field(field, dst);
            let table_changed = self.index.table().next_seq() != seq;
            memo.record(&mut cursor, field, &dst[before..], reusable, table_changed);
        }
        memo.finish(&mut cursor, self.index.table().next_seq(), dst);
        self.memo = Some(memo);
        octets
    }

    /// Encodes one field; returns whether the same field would encode to
    /// the same octets while the table stays as it is now (so the memo may
    /// copy them): not so for a usually-unique literal, which its next
    /// repeat indexes.
    fn encode_field(&mut self, field: FieldRef<'_>, dst: &mut BytesMut) -> bool {
        let never_index = field.sensitive
            || (self.policy == IndexingPolicy::Selective && never_indexed_by_default(field));
        let found = self.index.find(field.name, field.value);
        let name_index = match found {
            Match::Full(index) if !never_index => {
                // §6.1 indexed header field.
                integer::encode(index, 7, 0b1000_0000, dst);
                return true;
            }
            Match::Full(index) | Match::Name(index) => index,
            Match::None => 0,
        };
        if never_index {
            // §6.2.3 literal never indexed.
            self.encode_literal(field, name_index, 4, 0b0001_0000, dst);
            return true;
        }
        let unique = match self.policy {
            IndexingPolicy::Selective => self
                .uniques
                .as_deref()
                .map_or_else(|| unique_slot(field.name), |u| u.slot(field.name)),
            IndexingPolicy::All => None,
        };
        if self.should_index(field, unique) {
            // §6.2.1 literal with incremental indexing.
            self.encode_literal(field, name_index, 6, 0b0100_0000, dst);
            let (name, value) = (field.name.clone(), field.value.clone());
            let learn = self.policy == IndexingPolicy::Selective;
            let uniques = &mut self.uniques;
            self.index.insert(name, value, |unused| {
                if learn {
                    uniques.get_or_insert_with(Box::default).learn(unused);
                }
            });
            true
        } else {
            // §6.2.2 literal without indexing.
            self.encode_literal(field, name_index, 4, 0, dst);
            unique.is_none()
        }
    }

    /// Whether `field` goes into the table; `unique` is its name's slot
    /// among the usually-unique names ([`Uniques`]) under the
    /// [`Selective`](IndexingPolicy::Selective) policy.
    fn should_index(&mut self, field: FieldRef<'_>, unique: Option<usize>) -> bool {
        let size = field.size();
        let capacity = self.table_capacity();
        match self.policy {
            IndexingPolicy::All => size <= capacity,
            IndexingPolicy::Selective => {
                size <= capacity / 4 * 3 && unique.is_none_or(|slot| self.repeats(slot, field))
            }
        }
    }

    /// A field of a usually-unique name (in `slot` of [`Uniques`]) is
    /// worth a table entry once its value comes twice in a row: a client's
    /// requests of one body size repeat their content-length, a poll
    /// repeats its path.
    fn repeats(&mut self, slot: usize, field: FieldRef<'_>) -> bool {
        self.uniques
            .get_or_insert_with(Box::default)
            .repeats(slot, field.value)
    }

    fn encode_literal(
        &self,
        field: FieldRef<'_>,
        name_index: usize,
        prefix_bits: u8,
        pattern: u8,
        dst: &mut BytesMut,
    ) {
        integer::encode(name_index, prefix_bits, pattern, dst);
        if name_index == 0 {
            self.encode_string(field.name, dst);
        }
        self.encode_string(field.value, dst);
    }

    /// §5.2 string literal, Huffman-coded when that is shorter.
    fn encode_string(&self, s: &[u8], dst: &mut BytesMut) {
        if self.huffman {
            let coded_len = huffman::encoded_len(s);
            if coded_len < s.len() {
                integer::encode(coded_len, 7, 0b1000_0000, dst);
                huffman::encode(s, coded_len, dst);
                return;
            }
        }
        integer::encode(s.len(), 7, 0, dst);
        dst.put_slice(s);
    }
}

/// Fields the [`Selective`](IndexingPolicy::Selective) policy sends
/// never-indexed even when not marked sensitive (§7.1.3).
fn never_indexed_by_default(field: FieldRef<'_>) -> bool {
    let name = &field.name[..];
    name.eq_ignore_ascii_case(b"authorization")
        || name.eq_ignore_ascii_case(b"proxy-authorization")
        || (name.eq_ignore_ascii_case(b"cookie") && field.value.len() < MIN_INDEXED_COOKIE_LEN)
}

/// Fields whose values rarely repeat on a connection, so that indexing them
/// costs table space (evicting entries that would have been reused) and
/// gains nothing. Chosen by measurement on the hpack-test-case corpus: each
/// of these three shrinks its total encoded size at table sizes 4096 and
/// 16384 (by 1.4% together at 4096), while other candidates (`etag`,
/// `location`, `set-cookie`, `date`, `last-modified`, `expires`, `:path`
/// only when long) make it larger or change it by under 0.1%. Indexing them
/// once a value repeats the last one (`Encoder::worth_an_entry`) shrinks
/// the corpus by another 0.12%, and spares a simulator's requests of one
/// body size a literal content-length each.
const UNIQUE: [&[u8]; 3] = [b":path", b"content-length", b"age"];

/// Where `name` is in [`UNIQUE`], if it is there.
fn unique_slot(name: &[u8]) -> Option<usize> {
    UNIQUE.iter().position(|u| name.eq_ignore_ascii_case(u))
}

/// Names learned on a connection to be usually unique, at most.
const MAX_LEARNED: usize = 8;

/// The usually-unique names: [`UNIQUE`]'s, and those this connection
/// showed to be (a field of a name in the static table whose entry left
/// the table without being referred to: a `location` or an `etag` with a
/// new id in every response), which are then indexed only once a value
/// repeats, as [`UNIQUE`]'s are. Sending each such value as a literal
/// without indexing keeps the table for entries that are referred to, and
/// spares both ends an insertion and an eviction per field.
#[derive(Debug, Clone, Default)]
struct Uniques {
    /// Learned names, in the order learned.
    learned: Vec<Bytes>,
    /// The last value sent under each name, [`UNIQUE`]'s first (by slot).
    last: Vec<Vec<u8>>,
}

impl Uniques {
    /// `name`'s slot: its place in [`UNIQUE`], or after those among the
    /// learned names.
    fn slot(&self, name: &[u8]) -> Option<usize> {
        unique_slot(name).or_else(|| {
            self.learned
                .iter()
                .position(|n| n.as_ref() == name)
                .map(|i| UNIQUE.len() + i)
        })
    }

    /// `name`'s entry was evicted unused: it joins the usually-unique
    /// names, while there is room.
    fn learn(&mut self, name: &Bytes) {
        if self.learned.len() < MAX_LEARNED && self.slot(name).is_none() {
            self.learned.push(name.clone());
        }
    }

    /// Whether `value` is the last one sent under the name in `slot`, which
    /// `value` then becomes.
    fn repeats(&mut self, slot: usize, value: &[u8]) -> bool {
        if self.last.len() <= slot {
            self.last.resize_with(slot + 1, Vec::new);
        }
        let last = &mut self.last[slot];
        let repeated = !value.is_empty() && last.as_slice() == value;
        last.clear();
        if value.len() <= MAX_REMEMBERED_VALUE {
            last.extend_from_slice(value);
        }
        repeated
    }
}

/// Values longer than this are not remembered to see whether they repeat.
const MAX_REMEMBERED_VALUE: usize = 256;

#[cfg(test)]
mod tests {
    use super::*;

    fn first_octets(encoder: &mut Encoder, values: &[&'static str]) -> Vec<u8> {
        values
            .iter()
            .map(|&v| {
                let mut block = BytesMut::new();
                encoder.encode(&[HeaderField::new("content-length", v)], &mut block);
                block[0]
            })
            .collect()
    }

    /// A usually-unique field (content-length, index 28 in the static
    /// table) goes as a literal without indexing (§6.2.2: 0x0f 0x0d) until
    /// its value repeats the last one; then it is indexed (§6.2.1: 0x5c)
    /// and after that referred to (§6.1: 0xbe, dynamic index 62). Values
    /// that keep changing never take table space.
    #[test]
    fn a_usually_unique_field_is_indexed_once_it_repeats() {
        let mut encoder = Encoder::new();
        let repeated = first_octets(&mut encoder, &["1024", "1024", "1024", "1024"]);
        assert_eq!(repeated, [0x0f, 0x5c, 0xbe, 0xbe]);
        let mut encoder = Encoder::new();
        let changing = first_octets(&mut encoder, &["1", "2", "3", "2"]);
        assert_eq!(changing, [0x0f; 4]);
        assert_eq!(encoder.table_size(), 0);
    }

    /// A `location` with a new id in every response fills the table with
    /// entries nothing refers to; once several were evicted unused, it is
    /// sent as a literal without indexing (§6.2.2, static name 46: 0x0f
    /// 0x1f), the table stops changing, and the fields that recur stay
    /// referred to by their index.
    #[test]
    fn a_name_whose_entries_go_unused_stops_being_indexed() {
        let mut encoder = Encoder::new();
        let mut blocks = Vec::new();
        for n in 0..200 {
            let mut block = BytesMut::new();
            encoder.encode(
                &[
                    HeaderField::new("content-type", "application/json"),
                    HeaderField::new("location", format!("/nudm-sdm/v2/imsi-1/am-data/{n:036}")),
                ],
                &mut block,
            );
            blocks.push((block, encoder.table_size()));
        }
        let (first, _) = &blocks[0];
        assert_eq!(first[0] & 0b1100_0000, 0b0100_0000, "indexed at first");
        let (last, size) = &blocks[199];
        assert_eq!(
            last[0] & 0b1000_0000,
            0b1000_0000,
            "content-type referred to"
        );
        assert_eq!(last[1..3], [0x0f, 0x1f], "location not indexed");
        assert!(
            blocks[100..]
                .iter()
                .all(|(b, s)| s == size && b[..3] == last[..3])
        );
        let locations = encoder
            .table_entries()
            .filter(|(name, _)| name.as_ref() == b"location")
            .count();
        assert!(locations > 0, "the last entries stay until evicted");
    }

    /// Requests that differ only in a usually-unique value (a new `:path`
    /// each, sent as a literal that leaves the table as it is) copy the
    /// fields after it from the memo, and encode to the octets a fresh
    /// encoder writes; the memo keeps every field but `:method: POST`
    /// (a static entry, written directly), the path's place without its
    /// octets.
    #[test]
    fn fields_after_a_new_path_are_copied() {
        let request = |n: usize| {
            [
                HeaderField::new(":method", "POST"),
                HeaderField::new(":path", format!("/user/0109200{n:04}")),
                HeaderField::new("content-type", "application/json"),
                HeaderField::new("x-trace", "abc"),
            ]
        };
        let (mut memo, mut fresh) = (Encoder::new(), Encoder::new());
        let mut tails = Vec::new();
        for n in 0..6 {
            let (mut a, mut b) = (BytesMut::new(), BytesMut::new());
            let octets = memo.encode_refs(request(n).iter().map(FieldRef::from), &mut a);
            // Every field is counted, whether written directly, copied
            // from the memo or encoded.
            let named: usize = request(n)
                .iter()
                .map(|f| f.name.len() + f.value.len())
                .sum();
            assert_eq!(octets, named);
            fresh.trim();
            fresh.encode(&request(n), &mut b);
            assert_eq!(a, b, "request {n}");
            tails.push(a.split_off(a.len() - 2));
        }
        // From the third request on the two fields after the path are
        // indexed (two octets), the same each time.
        assert!(tails[2..].iter().all(|t| t == &tails[2]));
        assert_eq!(memo.memo.as_ref().map(|m| m.len()), Some(3));
        // Only the two copied fields' names and values are kept: the
        // path, never copied, leaves no key behind.
        let kept = "content-type".len() + "application/json".len() + "x-trace".len() + 3;
        assert_eq!(memo.memo.as_ref().map(|m| m.key_bytes()), Some(kept));
    }
}
