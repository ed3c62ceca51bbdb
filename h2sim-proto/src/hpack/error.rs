//! Decoding errors, each naming the rule of RFC 7541 that the block broke.

use std::fmt;

pub use super::huffman::HuffmanError;

/// Why a header block could not be decoded.
///
/// Offsets are byte positions in the header block handed to
/// [`Decoder::decode`](super::Decoder::decode), pointing at the start of the
/// offending integer, string or representation.
///
/// Every variant except [`HeaderListTooLarge`](Self::HeaderListTooLarge)
/// leaves the decoder's dynamic table out of step with the peer's encoder,
/// so the connection cannot continue: HTTP/2 requires a connection error of
/// type COMPRESSION_ERROR (RFC 9113 §4.3). See
/// [`is_compression_error`](Self::is_compression_error).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecoderError {
    /// An integer (§5.1) exceeds the implementation limit of 2^32 - 1 or
    /// spends more bytes than that needs.
    IntegerOverflow { offset: usize },
    /// The block ended inside an integer (§5.1).
    TruncatedInteger { offset: usize },
    /// A string literal (§5.2) claims more bytes than the block has left.
    TruncatedString {
        offset: usize,
        len: usize,
        available: usize,
    },
    /// Index 0 in an indexed header field representation (§6.1).
    ZeroIndex { offset: usize },
    /// An index beyond the static table plus the current dynamic table
    /// (§2.3.3). `dynamic_len` is the number of dynamic entries at the time.
    InvalidIndex { index: usize, dynamic_len: usize },
    /// A Huffman-coded string literal is invalid (§5.2).
    InvalidHuffman { offset: usize, error: HuffmanError },
    /// A dynamic table size update asks for more than the limit we
    /// advertised in SETTINGS_HEADER_TABLE_SIZE (§4.2, §6.3).
    TableSizeUpdateTooLarge { requested: usize, max: usize },
    /// A dynamic table size update after the first field representation
    /// of the block (§4.2).
    TableSizeUpdateNotAtStart { offset: usize },
    /// Our advertised limit went down below the table size in force, but the
    /// block did not start with a size update to at most `required_max`
    /// (§4.2; RFC 9113 §4.3.1).
    MissingTableSizeUpdate { required_max: usize },
    /// The decoded header list, by the §4.1 size of its fields, exceeds the
    /// limit set by [`Decoder::set_max_header_list_size`](super::Decoder::set_max_header_list_size).
    /// The block was still decoded to its end, so the dynamic table is in
    /// step with the peer: only the stream needs rejecting.
    HeaderListTooLarge { size: usize, max: usize },
}

impl DecoderError {
    /// Whether the error is fatal to the connection (COMPRESSION_ERROR);
    /// false only for [`HeaderListTooLarge`](Self::HeaderListTooLarge),
    /// after which decoding can go on with the next block.
    pub fn is_compression_error(&self) -> bool {
        !matches!(self, Self::HeaderListTooLarge { .. })
    }
}

impl fmt::Display for DecoderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::IntegerOverflow { offset } => write!(
                f,
                "integer at offset {offset} exceeds 2^32-1 or is over-long (RFC 7541 §5.1)"
            ),
            Self::TruncatedInteger { offset } => {
                write!(
                    f,
                    "header block ends inside the integer at offset {offset} (RFC 7541 §5.1)"
                )
            }
            Self::TruncatedString {
                offset,
                len,
                available,
            } => write!(
                f,
                "string literal at offset {offset} has length {len} but only {available} bytes remain (RFC 7541 §5.2)"
            ),
            Self::ZeroIndex { offset } => write!(
                f,
                "indexed header field at offset {offset} uses index 0 (RFC 7541 §6.1)"
            ),
            Self::InvalidIndex { index, dynamic_len } => write!(
                f,
                "index {index} is beyond the static table and the {dynamic_len} dynamic entries (RFC 7541 §2.3.3)"
            ),
            Self::InvalidHuffman { offset, error } => write!(
                f,
                "invalid Huffman string at offset {offset}: {error} (RFC 7541 §5.2)"
            ),
            Self::TableSizeUpdateTooLarge { requested, max } => write!(
                f,
                "dynamic table size update to {requested} exceeds the advertised limit {max} (RFC 7541 §6.3)"
            ),
            Self::TableSizeUpdateNotAtStart { offset } => write!(
                f,
                "dynamic table size update at offset {offset} follows a header field (RFC 7541 §4.2)"
            ),
            Self::MissingTableSizeUpdate { required_max } => write!(
                f,
                "header block does not start with the required dynamic table size update to at most {required_max} (RFC 7541 §4.2)"
            ),
            Self::HeaderListTooLarge { size, max } => write!(
                f,
                "decoded header list size {size} exceeds the limit {max} (RFC 9113 §6.5.2)"
            ),
        }
    }
}

impl std::error::Error for DecoderError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::InvalidHuffman { error, .. } => Some(error),
            _ => None,
        }
    }
}
