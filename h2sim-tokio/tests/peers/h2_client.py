#!/usr/bin/env python3
"""HTTP/2 client on Python's `h2` package, run against the h2sim server by
h2sim-tokio/tests/interop_python.rs.

    h2_client.py HOST PORT [--tls CA_FILE]

Over one connection it sends 20 GETs of "/" at once, a POST of 300,000
bytes to "/echo" (more than the default 65,535-byte windows, so flow
control has to move both ways), and a GET of "/push", which must bring a
pushed "/pushed.css". It prints what it checked and exits non-zero on the
first mismatch.
"""

import socket
import ssl
import sys

import h2.config
import h2.connection
import h2.events


def fail(message):
    print(f"FAIL {message}", flush=True)
    sys.exit(1)


def main():
    host, port = sys.argv[1], int(sys.argv[2])
    sock = socket.create_connection((host, port), timeout=10)
    if "--tls" in sys.argv:
        ca = sys.argv[sys.argv.index("--tls") + 1]
        context = ssl.create_default_context(cafile=ca)
        context.set_alpn_protocols(["h2"])
        sock = context.wrap_socket(sock, server_hostname=host)
        if sock.selected_alpn_protocol() != "h2":
            fail(f"ALPN chose {sock.selected_alpn_protocol()!r}")
        scheme = "https"
    else:
        scheme = "http"

    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    conn.initiate_connection()
    authority = f"{host}:{port}"

    def headers(method, path):
        return [(":method", method), (":scheme", scheme), (":authority", authority), (":path", path)]

    expected = {}  # stream id -> what its body must be (None: any non-empty body)
    for _ in range(20):
        stream = conn.get_next_available_stream_id()
        conn.send_headers(stream, headers("GET", "/"), end_stream=True)
        expected[stream] = None
    upload = bytes(i % 251 for i in range(300_000))
    echo_stream = conn.get_next_available_stream_id()
    conn.send_headers(echo_stream, headers("POST", "/echo"))
    expected[echo_stream] = upload
    to_upload = upload
    push_parent = conn.get_next_available_stream_id()
    conn.send_headers(push_parent, headers("GET", "/push"), end_stream=True)
    expected[push_parent] = b"pushed-parent\n"

    bodies = {}
    statuses = {}
    pushed = {}  # promised stream -> path
    done = set()
    while len(done) < len(expected) + 1:
        # Send as much of the upload as the windows allow.
        while to_upload:
            window = min(conn.local_flow_control_window(echo_stream), conn.max_outbound_frame_size)
            if window <= 0:
                break
            chunk, to_upload = to_upload[:window], to_upload[window:]
            conn.send_data(echo_stream, chunk, end_stream=not to_upload)
        sock.sendall(conn.data_to_send())
        data = sock.recv(65536)
        if not data:
            fail("server closed the connection early")
        for event in conn.receive_data(data):
            if isinstance(event, h2.events.ResponseReceived):
                statuses[event.stream_id] = dict(event.headers)[b":status"]
            elif isinstance(event, h2.events.DataReceived):
                bodies[event.stream_id] = bodies.get(event.stream_id, b"") + event.data
                conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            elif isinstance(event, h2.events.PushedStreamReceived):
                pushed[event.pushed_stream_id] = dict(event.headers)[b":path"]
            elif isinstance(event, h2.events.StreamEnded):
                done.add(event.stream_id)
            elif isinstance(event, (h2.events.StreamReset, h2.events.ConnectionTerminated)):
                fail(f"unexpected {event}")

    for stream, body in expected.items():
        if statuses.get(stream) != b"200":
            fail(f"stream {stream}: status {statuses.get(stream)!r}")
        got = bodies.get(stream, b"")
        if body is None and not got.startswith(b"hello from h2sim"):
            fail(f"stream {stream}: body {got[:40]!r}")
        if body is not None and got != body:
            fail(f"stream {stream}: body of {len(got)} bytes, expected {len(body)}")
    print(f"OK {len(expected)} responses, echo of {len(upload)} bytes", flush=True)
    if list(pushed.values()) != [b"/pushed.css"]:
        fail(f"pushes: {pushed}")
    (promised,) = pushed
    if bodies.get(promised) != b"body { color: green }\n":
        fail(f"pushed body {bodies.get(promised)!r}")
    print("OK push /pushed.css", flush=True)
    conn.close_connection()
    sock.sendall(conn.data_to_send())
    sock.close()


if __name__ == "__main__":
    main()
