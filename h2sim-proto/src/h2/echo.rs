//! Heads handed out again when their block comes again.
//!
//! A load generator sends one request head again and again, and a server
//! answers it with one response head: the HPACK decoder remembers the
//! fields of a block that came twice
//! ([`crate::hpack::Decoder::remembered`]), and every repeat would clone
//! them, split them into a head, check them and, once the application
//! gives the head back, drop them again. A head the application gives back
//! exactly as it was built from those fields is the head the next repeat
//! builds, so it is kept whole here and handed out for the next repeat
//! instead: nothing is cloned, split, checked or dropped.
//!
//! "Exactly as built" is checked by identity, not by content: every string
//! of the head must be one of the remembered strings (the same octets at
//! the same address, which the head's clone keeps alive, so no other
//! string can be there), in its place. A head the application changed, or
//! built from strings of its own, goes to the spares as before. Remembered
//! strings hold none of the block's octets, so a kept head pins no input
//! buffer.

use bytes::Bytes;

use super::fields::{octets, parse_status};
use crate::hpack::{HeaderField, Remembered};
use crate::message::{RequestHead, ResponseHead};
use crate::spares::{KEPT, Spares};
use crate::trim::Trim;

/// A head handed out again, for the path its block takes.
#[derive(Debug)]
pub(crate) enum Echo {
    /// A new request, on a server.
    Request(Box<RequestHead>),
    /// A response head, on a client.
    Response(ResponseHead),
}

/// Heads built from the decoder's remembered fields, given back unchanged;
/// in a box made when the first is kept, so a connection that never
/// repeats a head (or has gone quiet) holds a pointer.
#[derive(Debug, Default)]
pub(crate) struct Echoes(Option<Box<Kept>>);

#[derive(Debug, Default)]
struct Kept {
    /// The [`Remembered::id`] the heads below were built from (0: none).
    memo: u64,
    /// Where a head's strings sit among that list's fields.
    layout: Layout,
    /// Request heads (a server's).
    #[allow(clippy::vec_box, reason = "the boxes are what is handed out")]
    requests: Vec<Box<RequestHead>>,
    /// The ordinary fields of response heads (a client's).
    responses: Vec<Vec<HeaderField>>,
}

/// Where the strings of the head built from a list of remembered fields
/// sit in that list: worked out once per list, so checking a head given
/// back compares addresses only.
#[derive(Debug, Default, Clone, Copy)]
struct Layout {
    /// The places of `:method`, `:scheme`, `:authority` and `:path`, if
    /// the list's pseudo-fields are a request's.
    request: Option<[Option<usize>; 4]>,
    /// The status, if the only pseudo-field is a valid `:status`.
    status: Option<u16>,
    /// Where the ordinary fields start.
    ordinary: usize,
    /// The octets of the list's names and values, which the statistics
    /// count for every block handed out as decoded.
    octets: u64,
}

impl Layout {
    fn of(memo: &[HeaderField]) -> Self {
        let ordinary = memo
            .iter()
            .take_while(|f| f.name.first() == Some(&b':'))
            .count();
        let pseudo = &memo[..ordinary];
        let mut request = Some([None; 4]);
        for (at, field) in pseudo.iter().enumerate() {
            let slot = match field.name.as_ref() {
                b":method" => 0,
                b":scheme" => 1,
                b":authority" => 2,
                b":path" => 3,
                _ => {
                    request = None;
                    break;
                }
            };
            if let Some(slots) = &mut request {
                if slots[slot].is_some() {
                    request = None;
                    break;
                }
                slots[slot] = Some(at);
            }
        }
        let status = match pseudo {
            [status] if status.name.as_ref() == b":status" => parse_status(&status.value),
            _ => None,
        };
        Layout {
            request,
            status,
            ordinary,
            octets: octets(memo),
        }
    }
}

impl Echoes {
    /// Keeps `head` if it is the request `memo` builds; otherwise it
    /// becomes a spare.
    pub(crate) fn keep_request(
        &mut self,
        memo: Option<Remembered<'_>>,
        head: Box<RequestHead>,
        spares: &mut Spares,
    ) {
        match memo.map(|memo| (self.follow(memo, spares), memo.fields)) {
            Some((kept, memo))
                if kept.requests.len() < KEPT && is_request_of(&head, memo, &kept.layout) =>
            {
                kept.requests.push(head);
            }
            _ => spares.give_head(head),
        }
    }

    /// Keeps `fields` if they are the ordinary fields of the response
    /// `memo` builds; otherwise they become a spare.
    pub(crate) fn keep_response(
        &mut self,
        memo: Option<Remembered<'_>>,
        fields: Vec<HeaderField>,
        spares: &mut Spares,
    ) {
        match memo.map(|memo| (self.follow(memo, spares), memo.fields)) {
            Some((kept, memo))
                if kept.responses.len() < KEPT && is_response_of(&fields, memo, &kept.layout) =>
            {
                kept.responses.push(fields);
            }
            _ => spares.give_fields(fields),
        }
    }

    /// Whether a head built from the fields `memo` names is kept.
    pub(crate) fn holds(&self, memo: u64) -> bool {
        self.0.as_deref().is_some_and(|kept| {
            kept.memo == memo && !(kept.requests.is_empty() && kept.responses.is_empty())
        })
    }

    /// The octets of the names and values of the fields the kept heads
    /// are built from (0 when none are kept).
    pub(crate) fn octets(&self) -> u64 {
        self.0.as_deref().map_or(0, |kept| kept.layout.octets)
    }

    /// A kept request head built from the fields `memo` names.
    pub(crate) fn request(&mut self, memo: u64) -> Option<Box<RequestHead>> {
        let kept = self.0.as_deref_mut().filter(|k| k.memo == memo)?;
        kept.requests.pop()
    }

    /// A kept response head built from the fields `memo` names.
    pub(crate) fn response(&mut self, memo: u64) -> Option<ResponseHead> {
        let kept = self.0.as_deref_mut().filter(|k| k.memo == memo)?;
        let status = kept.layout.status?;
        let fields = kept.responses.pop()?;
        Some(ResponseHead { status, fields })
    }

    /// The heads of `memo`: those of an older list of fields will never
    /// be handed out, so their storage becomes spares.
    fn follow(&mut self, memo: Remembered<'_>, spares: &mut Spares) -> &mut Kept {
        let kept = self.0.get_or_insert_with(Box::default);
        if kept.memo != memo.id {
            kept.memo = memo.id;
            kept.layout = Layout::of(memo.fields);
            for head in kept.requests.drain(..) {
                spares.give_head(head);
            }
            for fields in kept.responses.drain(..) {
                spares.give_fields(fields);
            }
        }
        kept
    }
}

impl Trim for Echoes {
    /// All capacity, like the spares: a quiet connection keeps none.
    fn trim(&mut self) {
        self.0 = None;
    }
}

/// The same string: the same octets at the same address. Two empty
/// strings may point anywhere; taking them for different only keeps a
/// head out.
fn same(a: &Bytes, b: &Bytes) -> bool {
    a.as_ptr() == b.as_ptr() && a.len() == b.len()
}

/// The same fields, string for string.
fn same_fields(a: &[HeaderField], b: &[HeaderField]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    for (a, b) in a.iter().zip(b) {
        if a.sensitive != b.sensitive || !same(&a.name, &b.name) || !same(&a.value, &b.value) {
            return false;
        }
    }
    true
}

/// `fields` are, string for string, the ordinary fields of the response
/// head built from `memo`, whose `layout` is given.
fn is_response_of(fields: &[HeaderField], memo: &[HeaderField], layout: &Layout) -> bool {
    layout.status.is_some()
        && memo
            .get(layout.ordinary..)
            .is_some_and(|ordinary| same_fields(fields, ordinary))
}

/// `head` is, string for string, the request head built from `memo`,
/// whose `layout` is given.
fn is_request_of(head: &RequestHead, memo: &[HeaderField], layout: &Layout) -> bool {
    // A list with `:protocol` has no layout; a head given back with one
    // the application set is not the head its list builds.
    let Some(slots) = layout.request.filter(|_| head.protocol.is_empty()) else {
        return false;
    };
    let strings = [&head.method, &head.scheme, &head.authority, &head.path];
    for (s, at) in strings.into_iter().zip(slots) {
        let ok = match at {
            Some(at) => memo.get(at).is_some_and(|field| same(s, &field.value)),
            None => s.is_empty(),
        };
        if !ok {
            return false;
        }
    }
    memo.get(layout.ordinary..)
        .is_some_and(|ordinary| same_fields(&head.fields, ordinary))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memo_request() -> Vec<HeaderField> {
        vec![
            HeaderField::new(":method", "GET"),
            HeaderField::new(":scheme", "http"),
            HeaderField::new(":authority", Bytes::copy_from_slice(b"a.example")),
            HeaderField::new(":path", Bytes::copy_from_slice(b"/x")),
            HeaderField::new("accept", Bytes::copy_from_slice(b"*/*")),
        ]
    }

    fn built(memo: &[HeaderField]) -> Box<RequestHead> {
        let mut head = RequestHead::new(
            memo[0].value.clone(),
            memo[1].value.clone(),
            memo[2].value.clone(),
            memo[3].value.clone(),
        );
        head.fields = memo[4..].to_vec();
        Box::new(head)
    }

    fn remembered(id: u64, fields: &[HeaderField]) -> Option<Remembered<'_>> {
        Some(Remembered { id, fields })
    }

    /// A head built of the remembered strings is kept and handed out for
    /// that list only; an equal head of other strings, a changed one, or
    /// one missing a field is not.
    #[test]
    fn only_a_head_of_the_remembered_strings_is_kept() {
        let memo = memo_request();
        let mut echoes = Echoes::default();
        let mut spares = Spares::default();
        let head = built(&memo);
        let at = &*head as *const RequestHead;
        echoes.keep_request(remembered(7, &memo), head, &mut spares);
        assert!(echoes.request(6).is_none());
        let again = echoes.request(7).expect("kept");
        assert_eq!(&*again as *const RequestHead, at);
        assert!(echoes.request(7).is_none());

        // Equal content, other strings.
        let copy =
            Box::new(RequestHead::new("GET", "http", "a.example", "/x").field("accept", "*/*"));
        echoes.keep_request(remembered(7, &memo), copy, &mut spares);
        // A changed path, a dropped field, a sensitive flag, an extra
        // authority where the block had none.
        let mut path = built(&memo);
        path.path = memo[2].value.clone();
        let mut fewer = built(&memo);
        fewer.fields.clear();
        let mut sensitive = built(&memo);
        sensitive.fields[0].sensitive = true;
        let mut no_authority = memo.clone();
        no_authority.remove(2);
        for head in [path, fewer, sensitive] {
            echoes.keep_request(remembered(7, &memo), head, &mut spares);
        }
        echoes.keep_request(None, built(&memo), &mut spares);
        assert!(echoes.request(7).is_none());
        // A list without the authority the head has.
        echoes.keep_request(remembered(8, &no_authority), built(&memo), &mut spares);
        assert!(echoes.request(8).is_none());
    }

    /// Heads of an older list become spares once a newer list's head is
    /// kept.
    #[test]
    fn a_new_list_of_fields_lets_the_old_heads_go() {
        let (old, new) = (memo_request(), memo_request());
        let mut echoes = Echoes::default();
        let mut spares = Spares::default();
        echoes.keep_request(remembered(1, &old), built(&old), &mut spares);
        echoes.keep_request(remembered(2, &new), built(&new), &mut spares);
        assert!(echoes.request(1).is_none());
        assert!(echoes.request(2).is_some());
        assert!(echoes.request(2).is_none());
        // The old head's vector is a spare now.
        assert!(spares.fields().capacity() > 0);
    }

    #[test]
    fn a_response_keeps_its_fields_and_status() {
        let memo = vec![
            HeaderField::new(":status", "204"),
            HeaderField::new("server", Bytes::copy_from_slice(b"s")),
        ];
        let mut echoes = Echoes::default();
        let mut spares = Spares::default();
        echoes.keep_response(remembered(3, &memo), memo[1..].to_vec(), &mut spares);
        let head = echoes.response(3).expect("kept");
        assert_eq!(head.status, 204);
        assert!(same_fields(&head.fields, &memo[1..]));
        // Not a response block: a request's, or a bad status.
        let request = memo_request();
        echoes.keep_response(remembered(4, &request), request[4..].to_vec(), &mut spares);
        assert!(echoes.response(4).is_none());
        let bad = vec![HeaderField::new(":status", "2x0")];
        echoes.keep_response(remembered(5, &bad), Vec::new(), &mut spares);
        assert!(echoes.response(5).is_none());
    }
}
