//! Texts that last as long as the process: a run's request texts (its
//! steps' method, path, headers and body, its servers' authorities) and a
//! server's fixed answers (their fields and bodies) go into every request
//! or response. Clones of a shared `Bytes` count references atomically,
//! twice a text and message, which cost the client 5% of its CPU on a 1k
//! POST and the server as much on a 1k GET; clones of a static one are
//! copies. They are made once per run or server (never per message or
//! connection), so what is kept is bounded by the command line.

use bytes::Bytes;
use h2sim_proto::HeaderField;

/// `text`, kept for the rest of the process.
pub fn for_the_run(text: &[u8]) -> Bytes {
    if text.is_empty() {
        return Bytes::new();
    }
    Bytes::from_static(Box::leak(Box::<[u8]>::from(text)))
}

/// A body kept for the rest of the process, as [`for_the_run`] keeps a
/// text, unless it is large: then `bytes` itself is shared. Counting its
/// references costs nothing next to sending it, and a copy doubled the
/// memory of a run with `-e 200m` (417 MB), whose command line keeps the
/// first.
pub fn body(bytes: &Bytes) -> Bytes {
    /// Above this a body is shared rather than copied.
    const SHARED_ABOVE: usize = 64 * 1024;
    if bytes.len() > SHARED_ABOVE {
        bytes.clone()
    } else {
        for_the_run(bytes)
    }
}

/// `field` with its name and value kept for the rest of the process.
pub fn field(field: &HeaderField) -> HeaderField {
    HeaderField {
        name: for_the_run(&field.name),
        value: for_the_run(&field.value),
        sensitive: field.sensitive,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kept text is the same octets, and static: the only handle on a
    /// text counted by reference would be unique.
    #[test]
    fn kept_texts_are_static_copies() {
        let shared = Bytes::from(b"application/json".to_vec());
        let kept = for_the_run(&shared);
        assert_eq!(kept, shared);
        assert!(!kept.is_unique());
        let field = field(&HeaderField::new("content-type", shared).sensitive());
        assert!(field.sensitive && !field.value.is_unique() && field.value == kept);
        assert_eq!(for_the_run(b""), Bytes::new());
    }

    /// A large body is shared, not copied: one allocation for the command
    /// line and the run; a small one is kept as a text is.
    #[test]
    fn large_bodies_are_shared() {
        let large = Bytes::from(vec![b'x'; 1 << 20]);
        assert_eq!(body(&large).as_ptr(), large.as_ptr());
        let small = Bytes::from(vec![b'x'; 1024]);
        let kept = body(&small);
        assert_eq!(kept, small);
        assert_ne!(kept.as_ptr(), small.as_ptr());
    }
}
