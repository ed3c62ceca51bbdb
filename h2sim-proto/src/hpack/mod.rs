//! HPACK header compression (RFC 7541).
//!
//! HTTP/2 sends header lists as *header blocks*: sequences of
//! representations that refer to a shared static table, to a dynamic table
//! both ends build up over the connection, or carry literal strings,
//! optionally Huffman-coded. Each direction of a connection has one
//! [`Encoder`] on the sending side and one [`Decoder`] on the receiving
//! side, whose dynamic tables must stay identical: every block has to be
//! decoded, in order, and a decoding error other than
//! [`DecoderError::HeaderListTooLarge`] ends the connection.
//!
//! Like the rest of the crate this module does no I/O: blocks go in and out
//! as [`bytes::Bytes`]/[`bytes::BytesMut`], reassembled from and split into
//! HEADERS/CONTINUATION frames by the frame layer.
//!
//! Module layout:
//! - `field`: [`HeaderField`].
//! - `integer`: prefix-coded integers (§5.1).
//! - `huffman`: the static Huffman code (§5.2, Appendix B), table-driven.
//! - `table`: static table (Appendix A) and dynamic table (§2.3, §4).
//! - `index`: the encoder's hash-map lookup into both tables.
//! - `decoder`, `encoder`: the representations of §6.
//! - `error`: [`DecoderError`].

mod decoder;
mod encoder;
mod error;
mod field;
mod huffman;
mod index;
mod integer;
mod sent_memo;
mod table;

pub use decoder::{DEFAULT_MAX_HEADER_LIST_SIZE, Decoder, Remembered};
pub use encoder::{
    DEFAULT_TABLE_SIZE, Encoder, IndexingPolicy, MAX_ENCODER_TABLE_SIZE, MIN_INDEXED_COOKIE_LEN,
};
pub use error::{DecoderError, HuffmanError};
pub use field::HeaderField;
pub(crate) use field::{FieldRef, clear as clear_fields};
