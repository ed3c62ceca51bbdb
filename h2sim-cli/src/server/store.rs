//! The resources that resource rules keep: JSON bodies by item path, one
//! store for the whole server, so a GET after a POST on another connection
//! (or, with glommio, another executor's thread) sees it. A read-write
//! lock around an ordered map: reads (GET) share it, and an ordered map
//! lists a collection as one range. Bounded in items and bytes (paths
//! and bodies), so a peer cannot make it grow without end: past either
//! bound a new item is refused.
//!
//! The values at the list rules' filter pointers (`/nfType`) are read out
//! of each item when it is stored, so a discovery request compares them
//! instead of reading every stored profile again.

use std::collections::BTreeMap;
use std::sync::{PoisonError, RwLock};

use bytes::Bytes;
use serde_json::value::RawValue;

use crate::json_pointer;

/// The store's bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub max_items: usize,
    /// Bytes of paths and bodies together.
    pub max_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_items: 100_000,
            max_bytes: 64 << 20,
        }
    }
}

/// What a put did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Put {
    Created,
    Replaced,
}

/// Why the store took nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Full {
    Items(usize),
    Bytes(usize),
}

impl std::fmt::Display for Full {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Full::Items(n) => write!(f, "the store holds its limit of {n} items"),
            Full::Bytes(n) => write!(f, "the store would exceed its limit of {n} bytes"),
        }
    }
}

/// The shared store.
#[derive(Debug, Default)]
pub struct Store {
    limits: Limits,
    /// The pointers whose values each item keeps (see [`Item`]).
    indexed: Vec<String>,
    inner: RwLock<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    items: BTreeMap<String, Item>,
    bytes: usize,
}

/// A stored body, with its values at the store's indexed pointers, in
/// their order (`None`: nothing there, or the body is not JSON). They are
/// parts of the body, so they add at most its size per pointer; the
/// limits count the body.
#[derive(Debug)]
struct Item {
    body: Bytes,
    values: Box<[Option<Box<RawValue>>]>,
}

impl Inner {
    /// Puts `body` at `key` if the limits allow what it adds.
    fn put(
        &mut self,
        limits: Limits,
        indexed: &[String],
        key: String,
        body: Bytes,
    ) -> Result<Put, Full> {
        let old = self.items.get(&key).map(|item| key.len() + item.body.len());
        let new = key.len() + body.len();
        if old.is_none() && self.items.len() >= limits.max_items {
            return Err(Full::Items(limits.max_items));
        }
        let bytes = self.bytes - old.unwrap_or(0) + new;
        if bytes > limits.max_bytes {
            return Err(Full::Bytes(limits.max_bytes));
        }
        self.bytes = bytes;
        let values = indexed
            .iter()
            .map(|pointer| json_pointer::find_in(&body, pointer).map(ToOwned::to_owned))
            .collect();
        Ok(match self.items.insert(key, Item { body, values }) {
            Some(_) => Put::Replaced,
            None => Put::Created,
        })
    }
}

impl Store {
    pub fn new(limits: Limits) -> Store {
        Store {
            limits,
            indexed: Vec::new(),
            inner: RwLock::default(),
        }
    }

    /// The store, with each item keeping its values at `pointers` (the
    /// list rules' filters). Set before anything is stored.
    pub fn indexing(mut self, pointers: impl IntoIterator<Item = String>) -> Store {
        for pointer in pointers {
            if !self.indexed.contains(&pointer) {
                self.indexed.push(pointer);
            }
        }
        self
    }

    /// Where `pointer` is among the indexed ones (see [`Store::list_where`]).
    pub fn indexed(&self, pointer: &str) -> Option<usize> {
        self.indexed.iter().position(|p| p == pointer)
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }

    // A panic while holding the lock leaves the map consistent (every
    // change is one insert or remove), so a poisoned lock is used as is.
    fn read(&self) -> std::sync::RwLockReadGuard<'_, Inner> {
        self.inner.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Inner> {
        self.inner.write().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn get(&self, key: &str) -> Option<Bytes> {
        self.read().items.get(key).map(|item| item.body.clone())
    }

    pub fn put(&self, key: String, body: Bytes) -> Result<Put, Full> {
        self.write().put(self.limits, &self.indexed, key, body)
    }

    /// Replaces the item at `key` by what `change` makes of it, under one
    /// lock, so two patches of one item never lose either. `None` when
    /// there is no such item.
    pub fn update<E>(
        &self,
        key: &str,
        change: impl FnOnce(&Bytes) -> Result<Bytes, E>,
    ) -> Option<Result<Result<Bytes, Full>, E>> {
        let mut inner = self.write();
        let old = &inner.items.get(key)?.body;
        Some(change(old).map(|new| {
            inner
                .put(self.limits, &self.indexed, key.to_owned(), new.clone())
                .map(|_| new)
        }))
    }

    pub fn remove(&self, key: &str) -> bool {
        let mut inner = self.write();
        match inner.items.remove(key) {
            Some(item) => {
                inner.bytes -= key.len() + item.body.len();
                true
            }
            None => false,
        }
    }

    /// The items directly under `collection` (`collection/ID`), in id order.
    pub fn list(&self, collection: &str) -> Vec<Bytes> {
        self.list_where(collection, |_, _| true)
    }

    /// [`Store::list`], of the items `keep` takes, given each body and its
    /// values at the indexed pointers (by [`Store::indexed`]'s places).
    pub fn list_where(
        &self,
        collection: &str,
        keep: impl Fn(&Bytes, &[Option<Box<RawValue>>]) -> bool,
    ) -> Vec<Bytes> {
        let prefix = format!("{}/", collection.trim_end_matches('/'));
        self.read()
            .items
            .range(prefix.clone()..)
            .take_while(|(k, _)| k.starts_with(&prefix))
            .filter(|(k, item)| !k[prefix.len()..].contains('/') && keep(&item.body, &item.values))
            .map(|(_, item)| item.body.clone())
            .collect()
    }

    /// Items held and their bytes.
    pub fn size(&self) -> (usize, usize) {
        let inner = self.read();
        (inner.items.len(), inner.bytes)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn b(s: &'static str) -> Bytes {
        Bytes::from_static(s.as_bytes())
    }

    #[test]
    fn put_get_list_remove() {
        let s = Store::default();
        assert_eq!(s.put("/c/1".into(), b("{}")), Ok(Put::Created));
        assert_eq!(s.put("/c/1".into(), b("{\"a\":1}")), Ok(Put::Replaced));
        s.put("/c/2".into(), b("[]")).unwrap();
        s.put("/c/2/sub".into(), b("x")).unwrap();
        s.put("/cc/3".into(), b("y")).unwrap();
        assert_eq!(s.get("/c/1").unwrap(), "{\"a\":1}");
        assert_eq!(s.list("/c"), vec![b("{\"a\":1}"), b("[]")]);
        assert_eq!(s.size(), (4, 4 + 7 + 4 + 2 + 8 + 1 + 5 + 1));
        assert!(s.remove("/c/1"));
        assert!(!s.remove("/c/1"));
        assert_eq!(s.size().0, 3);
    }

    #[test]
    fn bounded_in_items_and_bytes() {
        let s = Store::new(Limits {
            max_items: 2,
            max_bytes: 20,
        });
        s.put("/a".into(), b("1")).unwrap();
        s.put("/b".into(), b("2")).unwrap();
        assert_eq!(s.put("/c".into(), b("3")), Err(Full::Items(2)));
        // Replacing is no new item, but its bytes count.
        assert_eq!(
            s.put("/a".into(), b("1234567890123456789")),
            Err(Full::Bytes(20))
        );
        assert_eq!(s.put("/a".into(), b("12345")), Ok(Put::Replaced));
        assert_eq!(s.size(), (2, 2 + 5 + 2 + 1));
    }

    /// Each item keeps its values at the indexed pointers, made anew when
    /// it is replaced or updated.
    #[test]
    fn items_keep_their_values_at_the_indexed_pointers() {
        let s = Store::default().indexing(["/t".to_owned(), "/n/0".to_owned(), "/t".to_owned()]);
        assert_eq!(
            (s.indexed("/t"), s.indexed("/n/0"), s.indexed("/x")),
            (Some(0), Some(1), None)
        );
        s.put("/c/1".into(), b(r#"{"t":"UDM","n":[1]}"#)).unwrap();
        s.put("/c/2".into(), b(r#"{"t":"AMF"}"#)).unwrap();
        s.put("/c/3".into(), b("not json")).unwrap();
        let values = |key: &str| {
            let inner = s.read();
            let item = &inner.items[key];
            item.values
                .iter()
                .map(|v| v.as_deref().map(RawValue::get).map(str::to_owned))
                .collect::<Vec<_>>()
        };
        assert_eq!(values("/c/1"), [Some(r#""UDM""#.into()), Some("1".into())]);
        assert_eq!(values("/c/2"), [Some(r#""AMF""#.into()), None]);
        assert_eq!(values("/c/3"), [None, None]);
        s.update("/c/2", |_| Ok::<_, ()>(b(r#"{"t":"SMF","n":[2]}"#)));
        assert_eq!(values("/c/2"), [Some(r#""SMF""#.into()), Some("2".into())]);
        let udm = s.list_where("/c", |_, values| {
            values[0].as_deref().is_some_and(|v| v.get() == r#""UDM""#)
        });
        assert_eq!(udm, vec![b(r#"{"t":"UDM","n":[1]}"#)]);
    }

    #[test]
    fn updates_see_the_latest_item() {
        let s = Store::default();
        assert!(s.update("/x", |_| Ok::<_, ()>(b("n"))).is_none());
        s.put("/x".into(), b("1")).unwrap();
        let r = s.update("/x", |old| {
            Ok::<_, ()>(Bytes::from(format!(
                "{}2",
                std::str::from_utf8(old).unwrap()
            )))
        });
        assert_eq!(r, Some(Ok(Ok(b("12")))));
        assert_eq!(s.get("/x").unwrap(), "12");
    }
}
