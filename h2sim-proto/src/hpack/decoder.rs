//! The HPACK decoder (RFC 7541 §3, §6): header block → header list.

use bytes::{Bytes, BytesMut};

use super::error::DecoderError;
use super::field::HeaderField;
use super::huffman;
use super::integer::{self, IntegerError};
use super::table::{DynamicTable, Entry, STATIC_LEN, STATIC_TABLE};

/// Default cap on a decoded header list, in §4.1 units (name + value + 32
/// per field). HTTP/2 leaves SETTINGS_MAX_HEADER_LIST_SIZE unlimited by
/// default, but a decoder that holds a peer's whole header list in memory
/// needs some bound. 64 KiB is far above real header lists (the largest in
/// the hpack-test-case corpus is about 2 KiB) and small enough that a
/// simulation with many streams does not hold much per stream.
pub const DEFAULT_MAX_HEADER_LIST_SIZE: usize = 64 * 1024;

/// Blocks up to this size are remembered (see [`Memo`]); real request and
/// response heads are a few dozen to a few hundred octets.
const MEMO_MAX_BLOCK: usize = 1024;

/// Decoding context for one direction of one connection.
///
/// Holds the dynamic table, which must see every header block the peer's
/// encoder produces, in order: skipping or failing a block desynchronises
/// it for good (see [`DecoderError::is_compression_error`]).
#[derive(Debug, Clone)]
pub struct Decoder {
    table: DynamicTable,
    /// The SETTINGS_HEADER_TABLE_SIZE in force: the most a size update may
    /// ask for.
    max_table_size: usize,
    /// Set when the advertised limit dropped below the size in force: the
    /// next block must start with a size update to at most this value (the
    /// smallest limit advertised since the last block).
    required_update: Option<usize>,
    max_header_list_size: usize,
    /// The last block, made in a box when first needed (see [`Memo`]).
    memo: Option<Box<Memo>>,
    /// Counts the memo's field lists: each new one gets the next number
    /// (see [`Remembered::id`]).
    memo_id: u64,
    /// The chunk Huffman-coded strings are decoded into, made when first
    /// needed (see `huffman::decode`).
    strings: Option<Box<BytesMut>>,
}

/// The fields the decoder remembers of the last block, once it came twice
/// in a row (see [`Decoder::remembered`]).
#[derive(Debug, Clone, Copy)]
pub struct Remembered<'a> {
    /// Names this list of fields: a later list, even of equal fields, has
    /// another id, so a head checked against one id is known to be built
    /// of that list's strings.
    pub id: u64,
    /// What the block decodes to; their strings hold none of the block's
    /// octets (a Huffman-coded one shares a small chunk of decoded strings).
    pub fields: &'a [HeaderField],
}

/// The last block decoded, when it left the table as it was, and its
/// fields once the same octets came twice in a row: a load generator, or a
/// server answering it, sends one head again and again, and with the table
/// unchanged the same octets decode to the same fields, so they are cloned
/// instead of decoded again. Any block that changes the table (an
/// insertion, a size update) or fails, and any change of our limits,
/// forgets it.
#[derive(Debug, Clone, Default)]
struct Memo {
    block: Vec<u8>,
    /// The fields of `block`, holding none of its octets (a raw literal is
    /// copied), so the memo never keeps a connection's input buffer alive.
    fields: Option<Vec<HeaderField>>,
    /// The last block decoded came from here.
    repeated: bool,
}

impl Memo {
    /// Whether `block` repeats the remembered one and its fields are
    /// remembered.
    fn repeats(&self, block: &[u8]) -> bool {
        self.fields.is_some() && self.block[..] == *block
    }
}

impl Decoder {
    /// A decoder whose dynamic table starts at, and is limited to,
    /// `max_table_size` — normally 4096, the HTTP/2 default that is in
    /// force until our SETTINGS are acknowledged.
    pub fn new(max_table_size: usize) -> Self {
        Self {
            table: DynamicTable::new(max_table_size),
            max_table_size,
            required_update: None,
            max_header_list_size: DEFAULT_MAX_HEADER_LIST_SIZE,
            memo: None,
            memo_id: 0,
            strings: None,
        }
    }

    /// Whether the last block decoded repeated the one before it, octet for
    /// octet, with the table unchanged: its fields are that block's, so
    /// whatever the caller checked of them holds again.
    pub fn repeated(&self) -> bool {
        self.memo.as_ref().is_some_and(|memo| memo.repeated)
    }

    /// The fields remembered of the last block, if it came twice in a row
    /// and left the table as it was. A head the caller built from them
    /// (clones of these very strings) is what decoding that block again
    /// would build: see [`take_repeat`](Self::take_repeat).
    pub fn remembered(&self) -> Option<Remembered<'_>> {
        let memo = self.memo.as_deref()?;
        Some(Remembered {
            id: self.memo_id,
            fields: memo.fields.as_deref()?,
        })
    }

    /// If `block` repeats the last block octet for octet and its fields
    /// are [`remembered`](Self::remembered), takes it as decoded without
    /// producing them (the table is unchanged by it, and
    /// [`repeated`](Self::repeated) is true): for a caller that holds a
    /// head built from those fields, which clones nothing. Says whether it
    /// did; if not, the block is still to be decoded.
    pub fn take_repeat(&mut self, block: &[u8]) -> bool {
        let Some(memo) = self.memo.as_deref_mut() else {
            return false;
        };
        let repeats = memo.repeats(block);
        memo.repeated |= repeats;
        repeats
    }

    /// Forgets the last block and lets go of the chunk strings are decoded
    /// into (an idle connection keeps only its table).
    pub fn trim(&mut self) {
        self.memo = None;
        self.strings = None;
    }

    /// Takes a new advertised SETTINGS_HEADER_TABLE_SIZE into force; call it
    /// when the peer acknowledges the SETTINGS frame carrying it.
    ///
    /// The table itself only shrinks when the peer's encoder says so with a
    /// size update. If `size` is below the size currently in force, the next
    /// block must start with such an update to at most `size` (to at most
    /// the smallest value, if this is called several times between blocks),
    /// or decoding it fails with [`DecoderError::MissingTableSizeUpdate`].
    pub fn set_max_table_size(&mut self, size: usize) {
        self.memo = None;
        self.max_table_size = size;
        if size < self.table.capacity() {
            self.required_update = Some(self.required_update.map_or(size, |r| r.min(size)));
        }
    }

    /// Sets the cap on the decoded header list, in §4.1 units (the sum of
    /// [`HeaderField::size`]); [`DEFAULT_MAX_HEADER_LIST_SIZE`] until then.
    /// This is our SETTINGS_MAX_HEADER_LIST_SIZE.
    pub fn set_max_header_list_size(&mut self, size: usize) {
        self.memo = None;
        self.max_header_list_size = size;
    }

    /// The current limit for size updates (the advertised table size).
    pub fn max_table_size(&self) -> usize {
        self.max_table_size
    }

    /// The maximum table size in force, as last set by the peer's encoder
    /// (or by [`new`](Self::new)).
    pub fn table_capacity(&self) -> usize {
        self.table.capacity()
    }

    /// Sum of the §4.1 sizes of the dynamic table's entries.
    pub fn table_size(&self) -> usize {
        self.table.size()
    }

    /// The dynamic table's entries as `(name, value)`, newest first — that
    /// is, in wire index order from 62 on.
    pub fn table_entries(&self) -> impl ExactSizeIterator<Item = (&Bytes, &Bytes)> {
        self.table.iter().map(|e| (&e.name, &e.value))
    }

    /// Decodes one complete header block (already reassembled from HEADERS
    /// and CONTINUATION frames), appending its fields to `out` in order.
    ///
    /// Literal strings that are not Huffman-coded are slices of `block`, not
    /// copies; Huffman-coded ones share a chunk of decoded strings with
    /// those decoded before and after them (about a KiB, given back by
    /// [`trim`](Self::trim)); fields taken from the tables share their
    /// storage.
    ///
    /// On error `out` is left as it was. After
    /// [`DecoderError::HeaderListTooLarge`] the block has nevertheless been
    /// decoded to its end (without collecting the fields past the limit), so
    /// the decoder stays usable; after any other error it must not be used
    /// again.
    pub fn decode(
        &mut self,
        block: &Bytes,
        out: &mut Vec<HeaderField>,
    ) -> Result<(), DecoderError> {
        if let Some(memo) = self.memo.as_deref_mut() {
            memo.repeated = memo.repeats(block);
            if memo.repeated
                && let Some(fields) = &memo.fields
            {
                out.extend(fields.iter().cloned());
                return Ok(());
            }
        }
        let start = out.len();
        match self.decode_block(block, out) {
            Ok(table_kept) => {
                self.remember(block, table_kept, &out[start..]);
                Ok(())
            }
            Err(e) => {
                out.truncate(start);
                self.memo = None;
                Err(e)
            }
        }
    }

    /// Keeps `block` as the last one, and its `fields` if it came twice.
    fn remember(&mut self, block: &Bytes, table_kept: bool, fields: &[HeaderField]) {
        if !table_kept || block.len() > MEMO_MAX_BLOCK {
            self.memo = None;
            return;
        }
        let memo = self.memo.get_or_insert_with(Box::default);
        if memo.block[..] == block[..] {
            self.memo_id += 1;
            memo.fields = Some(
                fields
                    .iter()
                    .map(|f| HeaderField {
                        name: owned(&f.name, block),
                        value: owned(&f.value, block),
                        sensitive: f.sensitive,
                    })
                    .collect(),
            );
        } else {
            memo.block.clear();
            memo.block.extend_from_slice(block);
            memo.fields = None;
        }
    }

    /// Decodes `block` into `out`; says whether the table was left as it was
    /// (no size update, no insertion).
    fn decode_block(
        &mut self,
        block: &Bytes,
        out: &mut Vec<HeaderField>,
    ) -> Result<bool, DecoderError> {
        let mut table_kept = true;
        let mut pos = 0;
        let mut list = ListSize {
            size: 0,
            max: self.max_header_list_size,
        };
        let mut field_seen = false;
        while let Some(&first) = block.get(pos) {
            if first & 0b1110_0000 == 0b0010_0000 {
                // §6.3 dynamic table size update.
                if field_seen {
                    return Err(DecoderError::TableSizeUpdateNotAtStart { offset: pos });
                }
                let size = read_int(block, &mut pos, 5)?;
                if size > self.max_table_size {
                    return Err(DecoderError::TableSizeUpdateTooLarge {
                        requested: size,
                        max: self.max_table_size,
                    });
                }
                self.table.set_capacity(size, |_, _| {});
                table_kept = false;
                if self
                    .required_update
                    .is_some_and(|required| size <= required)
                {
                    self.required_update = None;
                }
                continue;
            }
            if let Some(required_max) = self.required_update {
                return Err(DecoderError::MissingTableSizeUpdate { required_max });
            }
            field_seen = true;
            let field = if first & 0b1000_0000 != 0 {
                // §6.1 indexed header field.
                let offset = pos;
                let index = read_int(block, &mut pos, 7)?;
                if index == 0 {
                    return Err(DecoderError::ZeroIndex { offset });
                }
                let (name, value) = self.lookup(index)?;
                HeaderField {
                    name,
                    value,
                    sensitive: false,
                }
            } else if first & 0b0100_0000 != 0 {
                // §6.2.1 literal with incremental indexing. The entry
                // outlives the block and what was decoded with it: it keeps
                // copies of the literal strings, so that it holds neither
                // the input buffer the block is a slice of nor a chunk of
                // decoded strings (a peer could otherwise pin one per entry
                // with a few dozen octets each).
                let Literal {
                    name,
                    value,
                    new_name,
                } = self.read_literal(block, &mut pos, 6)?;
                let entry = Entry {
                    name: if new_name {
                        Bytes::copy_from_slice(&name)
                    } else {
                        name.clone()
                    },
                    value: Bytes::copy_from_slice(&value),
                };
                self.table.insert(entry, |_, _| {});
                table_kept = false;
                HeaderField {
                    name,
                    value,
                    sensitive: false,
                }
            } else {
                // §6.2.2 literal without indexing (0000) or §6.2.3 never
                // indexed (0001).
                let Literal { name, value, .. } = self.read_literal(block, &mut pos, 4)?;
                HeaderField {
                    name,
                    value,
                    sensitive: first & 0b0001_0000 != 0,
                }
            };
            list.push(field, out);
        }
        if let Some(required_max) = self.required_update {
            return Err(DecoderError::MissingTableSizeUpdate { required_max });
        }
        list.finish().map(|()| table_kept)
    }

    /// The name and value at wire index `index` (≥ 1) of the combined
    /// static and dynamic index space (§2.3.3).
    fn lookup(&self, index: usize) -> Result<(Bytes, Bytes), DecoderError> {
        if let Some(&(name, value)) = index.checked_sub(1).and_then(|i| STATIC_TABLE.get(i)) {
            return Ok((Bytes::from_static(name), Bytes::from_static(value)));
        }
        index
            .checked_sub(STATIC_LEN)
            .and_then(|i| self.table.get(i))
            .map(|e| (e.name.clone(), e.value.clone()))
            .ok_or(DecoderError::InvalidIndex {
                index,
                dynamic_len: self.table.len(),
            })
    }

    /// Reads the name index (with a `prefix_bits` prefix) or literal name,
    /// then the value, of a §6.2 literal representation.
    fn read_literal(
        &mut self,
        block: &Bytes,
        pos: &mut usize,
        prefix_bits: u8,
    ) -> Result<Literal, DecoderError> {
        let index = read_int(block, pos, prefix_bits)?;
        let new_name = index == 0;
        let name = if new_name {
            self.read_string(block, pos)?
        } else {
            self.lookup(index)?.0
        };
        let value = self.read_string(block, pos)?;
        Ok(Literal {
            name,
            value,
            new_name,
        })
    }

    /// Reads a §5.2 string literal: a slice of `block` when sent raw, cut
    /// from the decoder's chunk of strings when Huffman-coded.
    fn read_string(&mut self, block: &Bytes, pos: &mut usize) -> Result<Bytes, DecoderError> {
        let offset = *pos;
        let huffman = block.get(offset).is_some_and(|b| b & 0x80 != 0);
        let len = read_int(block, pos, 7)?;
        let start = *pos;
        let end = start.saturating_add(len);
        let Some(octets) = block.get(start..end) else {
            return Err(DecoderError::TruncatedString {
                offset,
                len,
                available: block.len().saturating_sub(start),
            });
        };
        *pos = end;
        if huffman {
            let chunk = self.strings.get_or_insert_with(Box::default);
            huffman::decode(octets, chunk)
                .map_err(|error| DecoderError::InvalidHuffman { offset, error })
        } else {
            Ok(block.slice(start..end))
        }
    }
}

/// A §6.2 literal representation's name and value; the name is a literal
/// string too when `new_name`, else it was taken from a table.
struct Literal {
    name: Bytes,
    value: Bytes,
    new_name: bool,
}

/// Running §4.1 size of the header list being decoded.
struct ListSize {
    size: usize,
    max: usize,
}

impl ListSize {
    /// Counts `field` and collects it unless the list is over the limit;
    /// past the limit fields are dropped so a peer cannot make us allocate
    /// without bound, while decoding continues to keep the table in step.
    fn push(&mut self, field: HeaderField, out: &mut Vec<HeaderField>) {
        self.size = self.size.saturating_add(field.size());
        if self.size <= self.max {
            out.push(field);
        }
    }

    fn finish(self) -> Result<(), DecoderError> {
        if self.size > self.max {
            Err(DecoderError::HeaderListTooLarge {
                size: self.size,
                max: self.max,
            })
        } else {
            Ok(())
        }
    }
}

fn read_int(block: &[u8], pos: &mut usize, prefix_bits: u8) -> Result<usize, DecoderError> {
    let offset = *pos;
    integer::decode(block, pos, prefix_bits).map_err(|e| match e {
        IntegerError::Truncated => DecoderError::TruncatedInteger { offset },
        IntegerError::Overflow => DecoderError::IntegerOverflow { offset },
    })
}

/// `string` as the memo keeps it beyond `block`: a copy if it is a slice
/// of the block, which is a slice of the connection's input buffer (tens
/// of KiB) that the memo would otherwise keep alive.
fn owned(string: &Bytes, block: &Bytes) -> Bytes {
    if block.as_ptr_range().contains(&string.as_ptr()) {
        Bytes::copy_from_slice(string)
    } else {
        string.clone()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn decode(d: &mut Decoder, block: &'static [u8]) -> Result<Vec<HeaderField>, DecoderError> {
        let mut out = Vec::new();
        d.decode(&Bytes::from_static(block), &mut out).map(|()| out)
    }

    /// A table entry outlives its block, which is a slice of the
    /// connection's input buffer, and the chunk Huffman-coded strings are
    /// decoded into: it keeps copies of the literals it came in (§6.2.1),
    /// so the buffer and the chunk are freed once the fields handed out
    /// (which may still share them) are dropped.
    #[test]
    fn table_entries_keep_neither_the_block_nor_decoded_strings() {
        let mut d = Decoder::new(4096);
        // §6.2.1 with a new name: "x-name: value" raw, then RFC 7541 C.4.3's
        // "custom-key: custom-value" Huffman-coded.
        let mut block = b"\x40\x06x-name\x05value\x40\x88".to_vec();
        block.extend_from_slice(&[0x25, 0xa8, 0x49, 0xe9, 0x5b, 0xa9, 0x7d, 0x7f, 0x89]);
        block.extend_from_slice(&[0x25, 0xa8, 0x49, 0xe9, 0x5b, 0xb8, 0xe8, 0xb4, 0xbf]);
        let block = Bytes::from(block);
        let mut out = Vec::new();
        d.decode(&block, &mut out).unwrap();
        assert_eq!(
            out,
            vec![
                HeaderField::new("x-name", "value"),
                HeaderField::new("custom-key", "custom-value")
            ]
        );
        let inside = block.as_ptr_range();
        assert!(
            inside.contains(&out[0].value.as_ptr()),
            "handed out as a slice"
        );
        let entries: Vec<_> = d.table_entries().collect();
        assert_eq!(entries.len(), 2);
        let (name, value) = entries[1];
        assert_eq!((&name[..], &value[..]), (&b"x-name"[..], &b"value"[..]));
        assert!(!inside.contains(&name.as_ptr()), "name shares the block");
        assert!(!inside.contains(&value.as_ptr()), "value shares the block");
        let (name, value) = entries[0];
        assert_eq!(&value[..], b"custom-value");
        assert_ne!(name.as_ptr(), out[1].name.as_ptr(), "name shares the chunk");
        assert_ne!(
            value.as_ptr(),
            out[1].value.as_ptr(),
            "value shares the chunk"
        );
    }

    /// A repeat is taken without decoding only once its fields are
    /// remembered, and only for the same octets; the table stays as it was
    /// and the next decode of those octets still gives the same fields.
    #[test]
    fn a_repeat_is_taken_only_for_the_remembered_block() {
        let mut d = Decoder::new(4096);
        let block = b"\x82\x00\x03x-n\x01v";
        assert!(!d.take_repeat(block), "nothing remembered yet");
        decode(&mut d, block).unwrap();
        assert!(!d.take_repeat(block), "seen once: octets only");
        decode(&mut d, block).unwrap();
        let id = d.remembered().expect("remembered").id;
        assert!(!d.take_repeat(b"\x82"), "other octets");
        assert!(d.take_repeat(block));
        assert!(d.repeated());
        assert_eq!(d.table_size(), 0);
        assert_eq!(d.remembered().map(|m| m.id), Some(id));
        let again = decode(&mut d, block).unwrap();
        assert_eq!(
            again,
            vec![
                HeaderField::new(":method", "GET"),
                HeaderField::new("x-n", "v")
            ]
        );
    }

    /// A block that comes again is cloned from the memo, which holds none
    /// of the input's octets; one that changed the table in between, or a
    /// lowered table limit, makes it decode afresh (RFC 7541 §2.3.2, §4.2).
    #[test]
    fn repeated_blocks_come_from_the_memo_while_the_table_stays() {
        let mut d = Decoder::new(4096);
        // "a: 1" with incremental indexing: index 62 from now on.
        decode(&mut d, b"\x40\x01a\x011").unwrap();
        // Index 62, then a raw literal without indexing ("x-n: v").
        let block = || Bytes::from(b"\xbe\x00\x03x-n\x01v".to_vec());
        let expect = vec![HeaderField::new("a", "1"), HeaderField::new("x-n", "v")];
        let mut out = Vec::new();
        for _ in 0..3 {
            let block = block();
            out.clear();
            d.decode(&block, &mut out).unwrap();
            assert_eq!(out, expect);
        }
        let last = block();
        out.clear();
        d.decode(&last, &mut out).unwrap();
        assert!(
            !last.as_ptr_range().contains(&out[1].value.as_ptr()),
            "from the memo"
        );
        // "b: 2" indexed: index 62 is now b: 2, so the same octets differ.
        decode(&mut d, b"\x40\x01b\x012").unwrap();
        for _ in 0..3 {
            let fields = decode(&mut d, b"\xbe\x00\x03x-n\x01v").unwrap();
            assert_eq!(fields[0], HeaderField::new("b", "2"));
        }
        // A block that inserts, sent again and again, inserts every time.
        for n in 1..=3 {
            decode(&mut d, b"\x40\x01c\x013").unwrap();
            assert_eq!(
                d.table_entries()
                    .filter(|(name, _)| &name[..] == b"c")
                    .count(),
                n
            );
        }
        // A lower limit needs a size update first, memo or not.
        d.set_max_table_size(0);
        assert_eq!(
            decode(&mut d, b"\xbe\x00\x03x-n\x01v"),
            Err(DecoderError::MissingTableSizeUpdate { required_max: 0 })
        );
    }

    #[test]
    fn raw_literals_are_zero_copy() {
        let block = Bytes::from_static(b"\x00\x03abc\x03def");
        let mut out = Vec::new();
        Decoder::new(4096).decode(&block, &mut out).unwrap();
        assert_eq!(out[0].name.as_ptr(), block[2..].as_ptr());
        assert_eq!(out[0].value.as_ptr(), block[6..].as_ptr());
    }

    #[test]
    fn static_and_dynamic_indices() {
        let mut d = Decoder::new(4096);
        // :method GET, then literal "x: y" indexed, then index 62.
        let out = decode(&mut d, b"\x82\x40\x01x\x01y\xbe").unwrap();
        assert_eq!(out[0], HeaderField::new(":method", "GET"));
        assert_eq!(out[1], HeaderField::new("x", "y"));
        assert_eq!(out[2], HeaderField::new("x", "y"));
        assert_eq!(
            decode(&mut d, b"\x80"),
            Err(DecoderError::ZeroIndex { offset: 0 })
        );
        let mut d = Decoder::new(4096);
        assert_eq!(
            decode(&mut d, b"\xbe"),
            Err(DecoderError::InvalidIndex {
                index: 62,
                dynamic_len: 0
            })
        );
        // Indexed name beyond the tables.
        assert_eq!(
            decode(&mut d, b"\x7f\x00\x01v"),
            Err(DecoderError::InvalidIndex {
                index: 63,
                dynamic_len: 0
            })
        );
    }

    #[test]
    fn never_indexed_is_reported_sensitive() {
        let mut d = Decoder::new(4096);
        let out = decode(&mut d, b"\x10\x01a\x01b\x00\x01c\x01d").unwrap();
        assert_eq!(
            out,
            [
                HeaderField::new("a", "b").sensitive(),
                HeaderField::new("c", "d")
            ]
        );
        assert_eq!(d.table_size(), 0);
    }

    #[test]
    fn truncation_is_an_error() {
        let mut d = Decoder::new(4096);
        assert_eq!(
            decode(&mut d, b"\x40"),
            Err(DecoderError::TruncatedInteger { offset: 1 })
        );
        assert_eq!(
            decode(&mut d, b"\x40\x05ab"),
            Err(DecoderError::TruncatedString {
                offset: 1,
                len: 5,
                available: 2
            })
        );
        assert_eq!(
            decode(&mut d, b"\xff"),
            Err(DecoderError::TruncatedInteger { offset: 0 })
        );
    }

    #[test]
    fn size_updates() {
        let mut d = Decoder::new(4096);
        // Two updates in a row, then a field.
        decode(&mut d, b"\x20\x3f\xe1\x1f\x82").unwrap();
        assert_eq!(d.table_capacity(), 4096);
        assert_eq!(
            decode(&mut d, b"\x3f\xe2\x1f"),
            Err(DecoderError::TableSizeUpdateTooLarge {
                requested: 4097,
                max: 4096
            })
        );
        let mut d = Decoder::new(4096);
        assert_eq!(
            decode(&mut d, b"\x82\x20"),
            Err(DecoderError::TableSizeUpdateNotAtStart { offset: 1 })
        );
    }

    #[test]
    fn lowered_limit_requires_update() {
        let mut d = Decoder::new(4096);
        decode(&mut d, b"\x40\x01a\x01b").unwrap();
        d.set_max_table_size(1000);
        d.set_max_table_size(2000);
        assert_eq!(
            decode(&mut d, b"\x82"),
            Err(DecoderError::MissingTableSizeUpdate { required_max: 1000 })
        );
        let mut d = Decoder::new(4096);
        d.set_max_table_size(1000);
        d.set_max_table_size(2000);
        // An update to 2000 alone does not cover the dip to 1000.
        assert_eq!(
            decode(&mut d, b"\x3f\xb1\x0f\x82"),
            Err(DecoderError::MissingTableSizeUpdate { required_max: 1000 })
        );
        let mut d = Decoder::new(4096);
        d.set_max_table_size(1000);
        d.set_max_table_size(2000);
        decode(&mut d, b"\x3f\xc9\x07\x3f\xb1\x0f\x82").unwrap();
        assert_eq!(d.table_capacity(), 2000);
        // Raising the limit needs no update.
        d.set_max_table_size(8000);
        decode(&mut d, b"\x82").unwrap();
        // An empty block cannot carry the required update.
        d.set_max_table_size(100);
        assert_eq!(
            decode(&mut d, b""),
            Err(DecoderError::MissingTableSizeUpdate { required_max: 100 })
        );
    }

    #[test]
    fn header_list_cap_keeps_table_in_sync() {
        let mut d = Decoder::new(4096);
        d.set_max_header_list_size(40);
        let mut out = vec![HeaderField::new("keep", "me")];
        let block = Bytes::from_static(b"\x40\x01a\x01b\x40\x01c\x01d");
        let err = d.decode(&block, &mut out).unwrap_err();
        assert_eq!(err, DecoderError::HeaderListTooLarge { size: 68, max: 40 });
        assert!(!err.is_compression_error());
        assert_eq!(out, [HeaderField::new("keep", "me")]);
        // Both entries were still added.
        let entries: Vec<_> = d.table_entries().collect();
        assert_eq!(
            entries,
            [
                (&Bytes::from("c"), &Bytes::from("d")),
                (&Bytes::from("a"), &Bytes::from("b"))
            ]
        );
        d.set_max_header_list_size(1000);
        let out = decode(&mut d, b"\xbe\xbf").unwrap();
        assert_eq!(
            out,
            [HeaderField::new("c", "d"), HeaderField::new("a", "b")]
        );
    }

    #[test]
    fn huffman_errors_carry_offset() {
        let mut d = Decoder::new(4096);
        assert_eq!(
            decode(&mut d, b"\x00\x81\xff\x00"),
            Err(DecoderError::InvalidHuffman {
                offset: 1,
                error: huffman::HuffmanError::PaddingTooLong
            })
        );
    }
}
