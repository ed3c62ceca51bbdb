//! Which end of a connection we are and which protocol it speaks: a leaf
//! that every protocol module imports, so none of them imports `connection`.

/// Which end of the connection we are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Client,
    Server,
}

/// The protocol a connection speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// HTTP/1.1 (RFC 9112), also answering HTTP/1.0 requests.
    Http1,
    /// HTTP/2 (RFC 9113).
    Http2,
}
