//! HTTP/1.1 (RFC 9112) behind the same events and commands as HTTP/2.
