//! A header field as HPACK sees it: opaque name and value octets.

use bytes::Bytes;

use super::table::entry_size;

/// One header field.
///
/// Names and values are octets, not text: HPACK neither validates nor
/// normalises them (lower-case names and the like are the HTTP/2 layer's
/// business), and decoded ones are returned exactly as received.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct HeaderField {
    pub name: Bytes,
    pub value: Bytes,
    /// On decode: the field arrived as a never-indexed literal (§6.2.3), so
    /// an intermediary re-encoding it must keep it out of its tables too.
    /// On encode: forces a never-indexed literal, for values that must not
    /// be exposed to compression-based guessing attacks (§7.1.3).
    pub sensitive: bool,
}

impl HeaderField {
    /// A field that is not marked sensitive.
    pub fn new(name: impl Into<Bytes>, value: impl Into<Bytes>) -> Self {
        Self {
            name: name.into(),
            value: value.into(),
            sensitive: false,
        }
    }

    /// Marks the field sensitive (see [`HeaderField::sensitive`](Self#structfield.sensitive)).
    #[must_use]
    pub fn sensitive(mut self) -> Self {
        self.sensitive = true;
        self
    }

    /// The field's size per RFC 7541 §4.1: name and value lengths plus 32.
    /// This is also the unit of SETTINGS_MAX_HEADER_LIST_SIZE (RFC 9113
    /// §6.5.2). Saturates instead of overflowing.
    pub fn size(&self) -> usize {
        entry_size(&self.name, &self.value)
    }
}

/// Empties `fields`. `Vec::clear` runs the fields' drop glue, an
/// out-of-line loop, even over nothing; the vectors recycled for every
/// message are empty by then more often than not.
pub(crate) fn clear(fields: &mut Vec<HeaderField>) {
    if !fields.is_empty() {
        fields.clear();
    }
}

/// A field borrowed for encoding: a [`HeaderField`] of a head, or a
/// pseudo-header field made from a head's own parts (`:method` and the
/// rest), so sending a head neither builds fields nor touches reference
/// counts; only an entry the encoder adds to its table clones the `Bytes`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FieldRef<'a> {
    pub(crate) name: &'a Bytes,
    pub(crate) value: &'a Bytes,
    pub(crate) sensitive: bool,
}

impl<'a> FieldRef<'a> {
    /// A field that is not marked sensitive.
    pub(crate) fn new(name: &'a Bytes, value: &'a Bytes) -> Self {
        FieldRef {
            name,
            value,
            sensitive: false,
        }
    }

    /// As [`HeaderField::size`].
    pub(crate) fn size(&self) -> usize {
        entry_size(self.name, self.value)
    }
}

impl<'a> From<&'a HeaderField> for FieldRef<'a> {
    fn from(field: &'a HeaderField) -> Self {
        FieldRef {
            name: &field.name,
            value: &field.value,
            sensitive: field.sensitive,
        }
    }
}
