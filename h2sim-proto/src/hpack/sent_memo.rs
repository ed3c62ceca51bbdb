//! The encoder's memo of the last block it encoded: each field's octets,
//! reused while the same fields come again in the same places and the
//! table has not changed.

use bytes::BytesMut;

use super::field::FieldRef;

/// Fields past this many octets of names and values are not remembered.
const MAX_KEYS: usize = 2048;

/// One remembered field: its name and value (in [`SentMemo::keys`]) and
/// what it encoded to (in [`SentMemo::octets`]).
#[derive(Debug, Clone, Copy)]
struct Slot {
    name_len: usize,
    value_len: usize,
    sensitive: bool,
    octets_len: usize,
}

/// A client sends one request head again and again, a server one response
/// head: field for field, the same octets, as long as the dynamic table is
/// as it was when they were encoded (a field's representation depends on
/// the table, not on its neighbours). The memo keeps the last block that
/// left the table unchanged; the next block copies the octets of its
/// leading fields that match, and encodes from the first that differs.
#[derive(Debug, Clone, Default)]
pub(crate) struct SentMemo {
    /// The table's insertion count when the last block ended.
    seq: u64,
    keys: Vec<u8>,
    octets: Vec<u8>,
    slots: Vec<Slot>,
}

/// Where a block stands against the memo while it is being encoded.
#[derive(Debug, Default)]
pub(crate) struct Cursor {
    /// Leading fields that matched, and the ends of their keys and octets.
    matched: usize,
    keys: usize,
    octets: usize,
    /// Still matching: nothing written yet.
    copying: bool,
    /// A field was too large to remember, or may encode otherwise next
    /// time: the ones after it are not remembered either, as the memo's
    /// fields must be the block's first.
    full: bool,
}

impl SentMemo {
    /// Starts a block. Only the encoder's blocks change its table, and
    /// [`SentMemo::finish`] forgets the octets of one that did, so what
    /// is remembered holds for the table as it is now.
    pub(crate) fn start(&self) -> Cursor {
        Cursor {
            copying: true,
            ..Cursor::default()
        }
    }

    /// Whether `field`, the next of the block, is the memo's next field; if
    /// so it is taken (its octets are written by [`SentMemo::flush`]).
    pub(crate) fn take(&self, cursor: &mut Cursor, field: FieldRef<'_>) -> bool {
        if !cursor.copying {
            return false;
        }
        let hit = self.slots.get(cursor.matched).is_some_and(|slot| {
            let (name, value) = (&field.name[..], &field.value[..]);
            let end = cursor.keys + slot.name_len + slot.value_len;
            slot.name_len == name.len()
                && slot.value_len == value.len()
                && slot.sensitive == field.sensitive
                && self.keys[cursor.keys..cursor.keys + slot.name_len] == *name
                && self.keys[cursor.keys + slot.name_len..end] == *value
        });
        if hit {
            let slot = self.slots[cursor.matched];
            cursor.matched += 1;
            cursor.keys += slot.name_len + slot.value_len;
            cursor.octets += slot.octets_len;
        }
        hit
    }

    /// Ends the copying, if not yet ended: writes the matched fields'
    /// octets to `dst` and forgets the fields after them, which this block
    /// replaces.
    pub(crate) fn flush(&mut self, cursor: &mut Cursor, dst: &mut BytesMut) {
        if cursor.copying {
            cursor.copying = false;
            dst.extend_from_slice(&self.octets[..cursor.octets]);
            self.slots.truncate(cursor.matched);
            self.keys.truncate(cursor.keys);
            self.octets.truncate(cursor.octets);
        }
    }

    /// Remembers `field`, which encoded to `octets`, after the kept ones;
    /// unless the field may encode otherwise next time (not `reusable`),
    /// which ends the memo's leading run there.
    pub(crate) fn record(
        &mut self,
        cursor: &mut Cursor,
        field: FieldRef<'_>,
        octets: &[u8],
        reusable: bool,
    ) {
        cursor.full |=
            !reusable || self.keys.len() + field.name.len() + field.value.len() > MAX_KEYS;
        if cursor.full {
            return;
        }
        self.keys.extend_from_slice(field.name);
        self.keys.extend_from_slice(field.value);
        self.octets.extend_from_slice(octets);
        self.slots.push(Slot {
            name_len: field.name.len(),
            value_len: field.value.len(),
            sensitive: field.sensitive,
            octets_len: octets.len(),
        });
    }

    /// The block is done, and the table is at insertion count `seq`: if
    /// the block changed it, its octets hold for the table as it was and
    /// are forgotten.
    pub(crate) fn finish(&mut self, cursor: &mut Cursor, seq: u64, dst: &mut BytesMut) {
        self.flush(cursor, dst);
        if seq != self.seq {
            self.slots.clear();
            self.keys.clear();
            self.octets.clear();
        }
        self.seq = seq;
    }
}
