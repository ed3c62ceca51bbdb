//! The stream state table against RFC 9113 §5.1, written again here from
//! the RFC's text (not from `transition`), one row per (state, input).

use proptest::prelude::*;

use super::*;

const STATES: [State; 7] = [
    State::Idle,
    State::ReservedLocal,
    State::ReservedRemote,
    State::Open,
    State::HalfClosedLocal,
    State::HalfClosedRemote,
    State::Closed,
];

const INPUTS: [Input; 10] = [
    Input::SendHeaders,
    Input::SendPushPromise,
    Input::SendData,
    Input::SendEndStream,
    Input::RecvHeaders,
    Input::RecvPushPromise,
    Input::RecvData,
    Input::RecvEndStream,
    Input::RecvRstStream,
    Input::RecvWindowUpdate,
];

/// The answer the RFC gives: a state, or the error a receiver raises (for
/// our sends: what the peer, in the mirrored state, would raise).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rfc {
    To(State),
    ConnProtocol,
    ConnStreamClosed,
    StreamStreamClosed,
}

fn rfc_table() -> Vec<(State, Input, Rfc, &'static str)> {
    use Input::*;
    use Rfc::*;
    use State::*;
    vec![
        // §5.1 idle: "Sending a HEADERS frame ... causes the stream to become open".
        (Idle, SendHeaders, To(Open), "§5.1 idle"),
        // §5.1 idle: "Sending a PUSH_PROMISE frame on another stream reserves the idle stream".
        (Idle, SendPushPromise, To(ReservedLocal), "§5.1 idle"),
        // §5.1 idle: the peer receiving anything but HEADERS/PRIORITY: PROTOCOL_ERROR.
        (Idle, SendData, ConnProtocol, "§5.1 idle"),
        (Idle, SendEndStream, ConnProtocol, "§5.1 idle"),
        // §5.1 idle: "Receiving a HEADERS frame ... causes the stream to become open".
        (Idle, RecvHeaders, To(Open), "§5.1 idle"),
        // §5.1 idle: "Receiving a PUSH_PROMISE ... reserves an idle stream".
        (Idle, RecvPushPromise, To(ReservedRemote), "§5.1 idle"),
        // §5.1 idle: "Receiving any frame other than HEADERS or PRIORITY ...
        // MUST be treated as a connection error of type PROTOCOL_ERROR".
        (Idle, RecvData, ConnProtocol, "§5.1 idle"),
        (Idle, RecvEndStream, ConnProtocol, "§5.1 idle"),
        (Idle, RecvRstStream, ConnProtocol, "§5.1 idle"),
        (Idle, RecvWindowUpdate, ConnProtocol, "§5.1 idle"),
        // §5.1 reserved (local): "sending a HEADERS frame causes the stream to open
        // in a half-closed (remote) state".
        (
            ReservedLocal,
            SendHeaders,
            To(HalfClosedRemote),
            "§5.1 reserved (local)",
        ),
        // §5.1 reserved (local): "MUST NOT send any type of frame other than HEADERS,
        // RST_STREAM, or PRIORITY"; the peer, reserved (remote), raises PROTOCOL_ERROR.
        (
            ReservedLocal,
            SendPushPromise,
            ConnProtocol,
            "§5.1 reserved (local)",
        ),
        (
            ReservedLocal,
            SendData,
            ConnProtocol,
            "§5.1 reserved (local)",
        ),
        (
            ReservedLocal,
            SendEndStream,
            ConnProtocol,
            "§5.1 reserved (local)",
        ),
        // §5.1 reserved (local): "Receiving any type of frame other than RST_STREAM,
        // PRIORITY, or WINDOW_UPDATE ... connection error of type PROTOCOL_ERROR".
        (
            ReservedLocal,
            RecvHeaders,
            ConnProtocol,
            "§5.1 reserved (local)",
        ),
        (
            ReservedLocal,
            RecvPushPromise,
            ConnProtocol,
            "§5.1 reserved (local)",
        ),
        (
            ReservedLocal,
            RecvData,
            ConnProtocol,
            "§5.1 reserved (local)",
        ),
        (
            ReservedLocal,
            RecvEndStream,
            ConnProtocol,
            "§5.1 reserved (local)",
        ),
        // §5.1 reserved (local): "Either endpoint can send a RST_STREAM ... the stream
        // becomes closed"; "A PRIORITY or WINDOW_UPDATE frame MAY be received".
        (
            ReservedLocal,
            RecvRstStream,
            To(Closed),
            "§5.1 reserved (local)",
        ),
        (
            ReservedLocal,
            RecvWindowUpdate,
            To(ReservedLocal),
            "§5.1 reserved (local)",
        ),
        // §5.1 reserved (remote): "An endpoint MAY send PRIORITY, RST_STREAM or
        // WINDOW_UPDATE" and nothing else; the peer, reserved (local), refuses.
        (
            ReservedRemote,
            SendHeaders,
            ConnProtocol,
            "§5.1 reserved (remote)",
        ),
        (
            ReservedRemote,
            SendPushPromise,
            ConnProtocol,
            "§5.1 reserved (remote)",
        ),
        (
            ReservedRemote,
            SendData,
            ConnProtocol,
            "§5.1 reserved (remote)",
        ),
        (
            ReservedRemote,
            SendEndStream,
            ConnProtocol,
            "§5.1 reserved (remote)",
        ),
        // §5.1 reserved (remote): "Receiving a HEADERS frame causes the stream to
        // transition to half-closed (local)".
        (
            ReservedRemote,
            RecvHeaders,
            To(HalfClosedLocal),
            "§5.1 reserved (remote)",
        ),
        // §5.1 reserved (remote): "Receiving any type of frame other than HEADERS,
        // RST_STREAM, or PRIORITY ... connection error of type PROTOCOL_ERROR".
        (
            ReservedRemote,
            RecvPushPromise,
            ConnProtocol,
            "§5.1 reserved (remote)",
        ),
        (
            ReservedRemote,
            RecvData,
            ConnProtocol,
            "§5.1 reserved (remote)",
        ),
        (
            ReservedRemote,
            RecvEndStream,
            ConnProtocol,
            "§5.1 reserved (remote)",
        ),
        (
            ReservedRemote,
            RecvWindowUpdate,
            ConnProtocol,
            "§5.1 reserved (remote)",
        ),
        (
            ReservedRemote,
            RecvRstStream,
            To(Closed),
            "§5.1 reserved (remote)",
        ),
        // §5.1 open: "may be used by both peers to send frames of any type".
        (Open, SendHeaders, To(Open), "§5.1 open"),
        (Open, SendPushPromise, To(Open), "§5.1 open, §6.6"),
        (Open, SendData, To(Open), "§5.1 open"),
        // §5.1 open: "sending a frame with END_STREAM ... half-closed (local)".
        (Open, SendEndStream, To(HalfClosedLocal), "§5.1 open"),
        (Open, RecvHeaders, To(Open), "§5.1 open"),
        (Open, RecvPushPromise, To(Open), "§5.1 open, §6.6"),
        (Open, RecvData, To(Open), "§5.1 open"),
        // §5.1 open: "receiving a frame with END_STREAM ... half-closed (remote)".
        (Open, RecvEndStream, To(HalfClosedRemote), "§5.1 open"),
        // §5.1 open: "Either endpoint can send a RST_STREAM ... closed".
        (Open, RecvRstStream, To(Closed), "§5.1 open"),
        (Open, RecvWindowUpdate, To(Open), "§5.1 open"),
        // §5.1 half-closed (local): "cannot send frames other than WINDOW_UPDATE,
        // PRIORITY, and RST_STREAM"; the peer, half-closed (remote), answers STREAM_CLOSED
        // (and a PUSH_PROMISE there is PROTOCOL_ERROR, §6.6).
        (
            HalfClosedLocal,
            SendHeaders,
            StreamStreamClosed,
            "§5.1 half-closed (local)",
        ),
        (HalfClosedLocal, SendPushPromise, ConnProtocol, "§6.6"),
        (
            HalfClosedLocal,
            SendData,
            StreamStreamClosed,
            "§5.1 half-closed (local)",
        ),
        (
            HalfClosedLocal,
            SendEndStream,
            StreamStreamClosed,
            "§5.1 half-closed (local)",
        ),
        // §5.1 half-closed (local): "frames of any type" may be received.
        (
            HalfClosedLocal,
            RecvHeaders,
            To(HalfClosedLocal),
            "§5.1 half-closed (local)",
        ),
        (
            HalfClosedLocal,
            RecvPushPromise,
            To(HalfClosedLocal),
            "§5.1, §6.6",
        ),
        (
            HalfClosedLocal,
            RecvData,
            To(HalfClosedLocal),
            "§5.1 half-closed (local)",
        ),
        // §5.1 half-closed (local): "transitions to closed when a frame ... END_STREAM
        // is received or when either peer sends a RST_STREAM".
        (
            HalfClosedLocal,
            RecvEndStream,
            To(Closed),
            "§5.1 half-closed (local)",
        ),
        (
            HalfClosedLocal,
            RecvRstStream,
            To(Closed),
            "§5.1 half-closed (local)",
        ),
        (
            HalfClosedLocal,
            RecvWindowUpdate,
            To(HalfClosedLocal),
            "§5.1 half-closed (local)",
        ),
        // §5.1 half-closed (remote): "can send frames of any type".
        (
            HalfClosedRemote,
            SendHeaders,
            To(HalfClosedRemote),
            "§5.1 half-closed (remote)",
        ),
        (
            HalfClosedRemote,
            SendPushPromise,
            To(HalfClosedRemote),
            "§5.1, §6.6",
        ),
        (
            HalfClosedRemote,
            SendData,
            To(HalfClosedRemote),
            "§5.1 half-closed (remote)",
        ),
        // §5.1 half-closed (remote): "sending a frame with END_STREAM ... closed".
        (
            HalfClosedRemote,
            SendEndStream,
            To(Closed),
            "§5.1 half-closed (remote)",
        ),
        // §5.1 half-closed (remote): "receives additional frames, other than
        // WINDOW_UPDATE, PRIORITY, or RST_STREAM ... stream error of type STREAM_CLOSED".
        (
            HalfClosedRemote,
            RecvHeaders,
            StreamStreamClosed,
            "§5.1 half-closed (remote)",
        ),
        (
            HalfClosedRemote,
            RecvData,
            StreamStreamClosed,
            "§5.1 half-closed (remote)",
        ),
        (
            HalfClosedRemote,
            RecvEndStream,
            StreamStreamClosed,
            "§5.1 half-closed (remote)",
        ),
        // §6.6: PUSH_PROMISE "on a stream that is neither open nor half-closed (local)"
        // is a connection error of type PROTOCOL_ERROR.
        (HalfClosedRemote, RecvPushPromise, ConnProtocol, "§6.6"),
        (
            HalfClosedRemote,
            RecvRstStream,
            To(Closed),
            "§5.1 half-closed (remote)",
        ),
        (
            HalfClosedRemote,
            RecvWindowUpdate,
            To(HalfClosedRemote),
            "§5.1 half-closed (remote)",
        ),
        // §5.1 closed: "MUST NOT send frames other than PRIORITY"; the peer, which has
        // received our END_STREAM, raises a connection error STREAM_CLOSED.
        (Closed, SendHeaders, ConnStreamClosed, "§5.1 closed"),
        (Closed, SendPushPromise, ConnProtocol, "§6.6"),
        (Closed, SendData, ConnStreamClosed, "§5.1 closed"),
        (Closed, SendEndStream, ConnStreamClosed, "§5.1 closed"),
        // §5.1 closed: "receives any frames after receiving a frame with the
        // END_STREAM flag set MUST treat that as a connection error ... STREAM_CLOSED".
        (Closed, RecvHeaders, ConnStreamClosed, "§5.1 closed"),
        (Closed, RecvData, ConnStreamClosed, "§5.1 closed"),
        (Closed, RecvEndStream, ConnStreamClosed, "§5.1 closed"),
        (Closed, RecvPushPromise, ConnProtocol, "§6.6"),
        // §5.1 closed: "Endpoints MUST ignore WINDOW_UPDATE or RST_STREAM frames
        // received in this state".
        (Closed, RecvRstStream, To(Closed), "§5.1 closed"),
        (Closed, RecvWindowUpdate, To(Closed), "§5.1 closed"),
    ]
}

fn answer(state: State, input: Input) -> Rfc {
    match transition(state, input) {
        Ok(next) => Rfc::To(next),
        Err(Refusal::Connection(Reason::PROTOCOL_ERROR)) => Rfc::ConnProtocol,
        Err(Refusal::Connection(Reason::STREAM_CLOSED)) => Rfc::ConnStreamClosed,
        Err(Refusal::Stream(Reason::STREAM_CLOSED)) => Rfc::StreamStreamClosed,
        Err(other) => panic!("({state:?}, {input:?}): unexpected refusal {other:?}"),
    }
}

#[test]
fn every_pair_matches_rfc_9113_section_5_1() {
    let table = rfc_table();
    for state in STATES {
        for input in INPUTS {
            let rows: Vec<_> = table
                .iter()
                .filter(|(s, i, _, _)| *s == state && *i == input)
                .collect();
            assert_eq!(rows.len(), 1, "({state:?}, {input:?}) needs one row");
            let (_, _, expected, section) = rows[0];
            assert_eq!(
                answer(state, input),
                *expected,
                "({state:?}, {input:?}), {section}"
            );
        }
    }
    assert_eq!(table.len(), STATES.len() * INPUTS.len());
}

/// The state the peer holds for the same stream (Figure 2 seen from the
/// other end).
fn mirror(state: State) -> State {
    match state {
        State::Idle => State::Idle,
        State::ReservedLocal => State::ReservedRemote,
        State::ReservedRemote => State::ReservedLocal,
        State::Open => State::Open,
        State::HalfClosedLocal => State::HalfClosedRemote,
        State::HalfClosedRemote => State::HalfClosedLocal,
        State::Closed => State::Closed,
    }
}

/// The input the peer sees when we do `send`.
fn received(send: Input) -> Option<Input> {
    match send {
        Input::SendHeaders => Some(Input::RecvHeaders),
        Input::SendPushPromise => Some(Input::RecvPushPromise),
        Input::SendData => Some(Input::RecvData),
        Input::SendEndStream => Some(Input::RecvEndStream),
        Input::RecvHeaders
        | Input::RecvPushPromise
        | Input::RecvData
        | Input::RecvEndStream
        | Input::RecvRstStream
        | Input::RecvWindowUpdate => None,
    }
}

/// A send is refused exactly when the peer would refuse it, with the same
/// error, and an allowed one leaves both ends in mirrored states (§5.1).
#[test]
fn a_send_is_what_the_peer_receives_in_the_mirrored_state() {
    for state in STATES {
        for send in INPUTS {
            let Some(recv) = received(send) else { continue };
            let ours = transition(state, send);
            let theirs = transition(mirror(state), recv).map(mirror);
            assert_eq!(ours, theirs, "({state:?}, {send:?})");
        }
    }
}

/// One step of a random exchange on one stream between its two ends.
#[derive(Debug, Clone, Copy)]
struct Step {
    from_client: bool,
    input: Input,
}

fn step() -> impl Strategy<Value = Step> {
    (
        any::<bool>(),
        prop::sample::select(vec![
            Input::SendHeaders,
            Input::SendPushPromise,
            Input::SendData,
            Input::SendEndStream,
        ]),
    )
        .prop_map(|(from_client, input)| Step { from_client, input })
}

fn rank(state: State) -> u8 {
    match state {
        State::Idle => 0,
        State::ReservedLocal | State::ReservedRemote => 1,
        State::Open => 2,
        State::HalfClosedLocal | State::HalfClosedRemote => 3,
        State::Closed => 4,
    }
}

proptest! {
    /// Random frames either way on one stream: what one end may send the
    /// other accepts, the two ends stay mirrored, and a stream only moves
    /// forward through Figure 2 (closed is final).
    #[test]
    fn random_exchanges_keep_both_ends_consistent(steps in prop::collection::vec(step(), 0..40)) {
        let (mut client, mut server) = (State::Idle, State::Idle);
        for Step { from_client, input } in steps {
            let (sender, receiver) = if from_client {
                (&mut client, &mut server)
            } else {
                (&mut server, &mut client)
            };
            let Ok(sent) = transition(*sender, input) else { continue };
            let Some(recv) = received(input) else { continue };
            let got = transition(*receiver, recv);
            prop_assert_eq!(got, Ok(mirror(sent)));
            prop_assert!(rank(sent) >= rank(*sender));
            *sender = sent;
            *receiver = mirror(sent);
            prop_assert_eq!(client, mirror(server));
        }
    }
}
