//! HTTP/2 frames (RFC 9113 §4, §6): decoding from partial input and encoding.
