//! PRIORITY frames and the priority fields of HEADERS (RFC 9113 §5.3, §6.3).
//!
//! RFC 9113 deprecates this prioritization scheme (§5.3.2) but frames still
//! carry it, so the fields are parsed and exposed, and only the checks the RFC
//! keeps are applied: the length and that a stream does not depend on itself.

use bytes::{BufMut, Bytes, BytesMut};

use super::StreamId;
use super::error::{FrameError, FrameErrorKind};
use super::head::{FrameKind, Head};

/// Exclusive flag, Stream Dependency and Weight (RFC 9113 §6.2, §6.3).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct PrioritySpec {
    /// The stream this one depends on; 0 means none.
    pub dependency: StreamId,
    /// Whether the dependency is exclusive (RFC 7540 §5.3.1).
    pub exclusive: bool,
    /// The wire value: the weight is this plus one, 1 to 256 (§6.3).
    pub weight: u8,
}

impl PrioritySpec {
    /// Encoded size: 4 bytes of E bit and dependency, 1 of weight.
    pub(crate) const LEN: usize = 5;

    /// Reads the five bytes. The top bit of the first word is the Exclusive
    /// flag, not a reserved bit.
    pub(crate) fn parse(bytes: [u8; Self::LEN]) -> PrioritySpec {
        let [d0, d1, d2, d3, weight] = bytes;
        let word = u32::from_be_bytes([d0, d1, d2, d3]);
        PrioritySpec {
            dependency: StreamId::new(word),
            exclusive: word & 0x8000_0000 != 0,
            weight,
        }
    }

    pub(crate) fn encode(&self, dst: &mut BytesMut) {
        let exclusive = if self.exclusive { 0x8000_0000 } else { 0 };
        dst.put_u32(self.dependency.value() | exclusive);
        dst.put_u8(self.weight);
    }

    /// A stream cannot depend on itself: stream error PROTOCOL_ERROR
    /// (§5.3.1).
    pub(crate) fn depends_on(&self, stream_id: StreamId) -> bool {
        self.dependency == stream_id
    }
}

/// PRIORITY (type 0x2, RFC 9113 §6.3): a stream's priority, sent at any time.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Priority {
    /// The stream being prioritized.
    pub stream_id: StreamId,
    /// Its new priority.
    pub spec: PrioritySpec,
}

impl Priority {
    pub(crate) fn decode(head: &Head, payload: Bytes) -> Result<Priority, FrameError> {
        // §6.3: on stream 0 a connection error PROTOCOL_ERROR; checked before
        // the length so the more serious error wins.
        let stream_id = head.nonzero_stream()?;
        // §6.3: a length other than 5 is a *stream* error FRAME_SIZE_ERROR;
        // PRIORITY cannot change connection state, so §4.2 allows it.
        let Ok(bytes) = <[u8; PrioritySpec::LEN]>::try_from(payload.as_ref()) else {
            return Err(FrameError::stream(
                stream_id,
                FrameErrorKind::BadLength {
                    kind: FrameKind::Priority,
                    len: head.len,
                    expected: 5,
                },
            ));
        };
        let spec = PrioritySpec::parse(bytes);
        if spec.depends_on(stream_id) {
            return Err(FrameError::stream(
                stream_id,
                FrameErrorKind::SelfDependency {
                    stream_id,
                    headers: None,
                },
            ));
        }
        Ok(Priority { stream_id, spec })
    }

    /// Writes the whole frame.
    pub fn encode(&self, dst: &mut BytesMut) {
        Head {
            len: 5,
            kind: FrameKind::Priority,
            flags: 0,
            stream_id: self.stream_id,
        }
        .encode(dst);
        self.spec.encode(dst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exclusive_bit_is_not_part_of_the_dependency() {
        let spec = PrioritySpec::parse([0x80, 0, 0, 5, 15]);
        assert_eq!(
            spec,
            PrioritySpec {
                dependency: StreamId::new(5),
                exclusive: true,
                weight: 15
            }
        );
        let mut buf = BytesMut::new();
        spec.encode(&mut buf);
        assert_eq!(&buf[..], &[0x80, 0, 0, 5, 15]);
    }
}
