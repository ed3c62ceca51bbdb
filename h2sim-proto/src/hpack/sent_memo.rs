//! The encoder's memo of the last block it encoded: each field's octets,
//! reused for the fields that come again in the same places while the
//! table has not changed.

use bytes::BytesMut;

use super::field::FieldRef;

/// Fields past this many octets of names and values are not remembered.
const MAX_KEYS: usize = 2048;

/// One remembered field: its name and value (in [`SentMemo::keys`]) and
/// what it encoded to (in [`SentMemo::octets`]); for a field that may not be
/// copied, only its place (no key, no octets).
#[derive(Debug, Clone, Copy)]
struct Slot {
    name_len: usize,
    value_len: usize,
    sensitive: bool,
    octets_len: usize,
    /// The same field would encode to the same octets again (not so for a
    /// usually-unique literal, which its next repeat indexes): it may be
    /// copied.
    reusable: bool,
}

/// A client sends one request head again and again, a server one response
/// head: field for field, the same octets, as long as the dynamic table is
/// as it was when they were encoded (a field's representation depends on
/// the table, not on its neighbours). The memo keeps the last block that
/// left the table unchanged; the next block copies the octets of each
/// field that matches the memo's in the same place, and encodes the others
/// (a request's new `:path`), which then take that place in the memo.
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
    /// The memo's field the block's next one is compared with, and where
    /// its key and octets start.
    slot: usize,
    keys: usize,
    octets: usize,
    /// Matched octets from here to `octets` are not written out yet.
    run: usize,
    /// The block changed the table, or outgrew [`MAX_KEYS`]: nothing more
    /// is copied or remembered.
    done: bool,
}

impl SentMemo {
    /// Starts a block. Only the encoder's blocks change its table, and
    /// [`SentMemo::finish`] forgets the octets of one that did, so what
    /// is remembered holds for the table as it is now.
    pub(crate) fn start(&self) -> Cursor {
        Cursor::default()
    }

    /// Whether `field`, the next of the block, is the memo's field in its
    /// place; if so it is taken (its octets are written by
    /// [`SentMemo::flush`]).
    pub(crate) fn take(&self, cursor: &mut Cursor, field: FieldRef<'_>) -> bool {
        if cursor.done {
            return false;
        }
        let Some(&slot) = self.slots.get(cursor.slot) else {
            return false;
        };
        let (name, value) = (&field.name[..], &field.value[..]);
        let hit = slot.reusable
            && slot.name_len == name.len()
            && slot.value_len == value.len()
            && slot.sensitive == field.sensitive
            // The value first: in a field's place it is what changes.
            && self
                .keys
                .get(cursor.keys + slot.name_len..cursor.keys + slot.name_len + slot.value_len)
                == Some(value)
            && self.keys.get(cursor.keys..cursor.keys + slot.name_len) == Some(name);
        if hit {
            cursor.slot += 1;
            cursor.keys += slot.name_len + slot.value_len;
            cursor.octets += slot.octets_len;
        }
        hit
    }

    /// Writes the octets of the fields taken since the last flush to `dst`.
    pub(crate) fn flush(&self, cursor: &mut Cursor, dst: &mut BytesMut) {
        if let Some(run) = self.octets.get(cursor.run..cursor.octets) {
            dst.extend_from_slice(run);
        }
        cursor.run = cursor.octets;
    }

    /// Remembers `field`, which did not match and encoded to `octets`, in
    /// its place (after [`SentMemo::flush`]); `reusable` as in [`Slot`].
    /// An encoding that changed the table (`table_changed`) ends the
    /// copying: the memo's octets assume the table as it was.
    pub(crate) fn record(
        &mut self,
        cursor: &mut Cursor,
        field: FieldRef<'_>,
        octets: &[u8],
        reusable: bool,
        table_changed: bool,
    ) {
        if cursor.done {
            return;
        }
        if table_changed {
            cursor.done = true;
            return;
        }
        let (old_keys, old_octets) = self
            .slots
            .get(cursor.slot)
            .map_or((0, 0), |s| (s.name_len + s.value_len, s.octets_len));
        // A field that may not be copied is never compared either: its slot
        // only holds the place, with no octets or key behind it.
        let (name, value, octets): (&[u8], &[u8], &[u8]) = if reusable {
            (field.name, field.value, octets)
        } else {
            (&[], &[], &[])
        };
        let key_len = name.len() + value.len();
        if self.keys.len() - old_keys + key_len > MAX_KEYS {
            // Too much to remember: the memo ends before this field.
            self.truncate(cursor);
            cursor.done = true;
            return;
        }
        replace(&mut self.keys, cursor.keys, old_keys, &[name, value]);
        replace(&mut self.octets, cursor.octets, old_octets, &[octets]);
        let slot = Slot {
            name_len: name.len(),
            value_len: value.len(),
            sensitive: field.sensitive,
            octets_len: octets.len(),
            reusable,
        };
        match self.slots.get_mut(cursor.slot) {
            Some(old) => *old = slot,
            None => self.slots.push(slot),
        }
        cursor.slot += 1;
        cursor.keys += key_len;
        cursor.octets += octets.len();
        cursor.run = cursor.octets;
    }

    /// The block is done, and the table is at insertion count `seq`: the
    /// matched octets still owed go to `dst`; the memo's fields past the
    /// block's end are forgotten, and all of them if the block changed the
    /// table (their octets hold for the table as it was).
    pub(crate) fn finish(&mut self, cursor: &mut Cursor, seq: u64, dst: &mut BytesMut) {
        self.flush(cursor, dst);
        if seq == self.seq {
            self.truncate(cursor);
        } else {
            self.slots.clear();
            self.keys.clear();
            self.octets.clear();
        }
        self.seq = seq;
    }

    /// Fields remembered, for tests.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    /// Octets of names and values remembered, for tests.
    #[cfg(test)]
    pub(crate) fn key_bytes(&self) -> usize {
        self.keys.len()
    }

    /// Forgets the fields from the cursor on.
    fn truncate(&mut self, cursor: &Cursor) {
        self.slots.truncate(cursor.slot);
        self.keys.truncate(cursor.keys);
        self.octets.truncate(cursor.octets);
    }
}

/// Replaces the `old` bytes of `buf` at `at` with `parts`, one after the
/// other, moving what follows by the difference (nothing moves when the
/// lengths agree, as a new `:path` of the same length does).
fn replace(buf: &mut Vec<u8>, at: usize, old: usize, parts: &[&[u8]]) {
    let new: usize = parts.iter().map(|p| p.len()).sum();
    if new != old {
        let (end, len) = (at + old, buf.len());
        if new > old {
            buf.resize(len + new - old, 0);
        }
        buf.copy_within(end..len, at + new);
        buf.truncate(len + new - old);
    }
    let mut to = at;
    for part in parts {
        if let Some(dst) = buf.get_mut(to..to + part.len()) {
            dst.copy_from_slice(part);
        }
        to += part.len();
    }
}
