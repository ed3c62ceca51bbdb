//! HPACK header compression (RFC 7541).
