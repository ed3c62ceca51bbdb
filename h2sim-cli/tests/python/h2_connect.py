"""Python's h2 (python-hyper/h2) opening a CONNECT tunnel to `h2sim server`.

Usage: h2_connect.py HOST:PORT websocket|plain|deaf|early

websocket: an extended CONNECT (RFC 8441) to /chat with :protocol websocket,
sent once the server's SETTINGS said ENABLE_CONNECT_PROTOCOL = 1 (h2 sends
:protocol only then); plain: a CONNECT with :authority only (RFC 9113 §8.5).
Neither ends its stream with the head. It prints `settings enable_connect_protocol
N`, then `status N` (or `reset CODE`); after a 2xx it sends "hello", waits for
it to come back, sends " tunnel" with END_STREAM, and prints `echo BYTES`
with all that came back and `ended` once the server ended its side.
deaf: a plain CONNECT from a client whose receive window is 0 and never
opens, which sends up to 4 MiB on the tunnel as the server's window lets it
and prints `reset CODE` when the server resets the stream, else `sent all`.
early: three plain CONNECTs (streams 1, 3, 5) to a server slow to answer,
600 KiB sent on each before any answer; prints `reset STREAM CODE` for each
stream the server resets, then `answered N` for the 2xx that came.
"""

import socket
import sys

import h2.config
import h2.connection
import h2.events
import h2.settings

authority, mode = sys.argv[1], sys.argv[2]
host, port = authority.rsplit(":", 1)
sock = socket.create_connection((host, int(port)))
sock.settimeout(20)
conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
conn.initiate_connection()
if mode == "deaf":
    conn.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 0})
sock.sendall(conn.data_to_send())


def read_until(done):
    """Reads, acknowledging data, until `done(event)` holds for an event."""
    while True:
        data = sock.recv(65536)
        if not data:
            print("cut", flush=True)
            sys.exit(1)
        for event in conn.receive_data(data):
            if isinstance(event, h2.events.DataReceived):
                conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            if done(event):
                sock.sendall(conn.data_to_send())
                return event
        sock.sendall(conn.data_to_send())


read_until(lambda e: isinstance(e, h2.events.RemoteSettingsChanged))
print("settings enable_connect_protocol",
      conn.remote_settings.enable_connect_protocol, flush=True)
if mode == "websocket":
    head = [(":method", "CONNECT"), (":protocol", "websocket"), (":scheme", "http"),
            (":path", "/chat"), (":authority", authority), ("sec-websocket-version", "13")]
else:
    head = [(":method", "CONNECT"), (":authority", "upstream.example:443")]
if mode == "early":
    for stream in (1, 3, 5):
        conn.send_headers(stream, head)
        left = 600 * 1024
        while left > 0:
            room = min(conn.local_flow_control_window(stream), left, 16384)
            if room == 0:
                read_until(lambda e: isinstance(e, h2.events.WindowUpdated))
                continue
            conn.send_data(stream, b"x" * room)
            left -= room
        sock.sendall(conn.data_to_send())
    answered, ended = 0, set()
    while len(ended) < 3:
        data = sock.recv(65536)
        if not data:
            break
        for event in conn.receive_data(data):
            if isinstance(event, h2.events.StreamReset):
                print("reset", event.stream_id, int(event.error_code), flush=True)
                ended.add(event.stream_id)
            elif isinstance(event, h2.events.ResponseReceived):
                answered += 1
                ended.add(event.stream_id)
        sock.sendall(conn.data_to_send())
    print("answered", answered, flush=True)
    sys.exit(0)
conn.send_headers(1, head)
sock.sendall(conn.data_to_send())
answer = read_until(lambda e: isinstance(e, (h2.events.ResponseReceived, h2.events.StreamReset)))
if isinstance(answer, h2.events.StreamReset):
    print("reset", int(answer.error_code), flush=True)
    sys.exit(0)
status = int(dict(answer.headers)[b":status"])
print("status", status, flush=True)
if not 200 <= status < 300:
    sys.exit(0)
if mode == "deaf":
    sent, chunk = 0, b"x" * 16384
    while sent < 4 << 20:
        room = min(conn.local_flow_control_window(1), len(chunk))
        if room == 0:
            data = sock.recv(65536)
            if not data:
                print("cut", flush=True)
                sys.exit(1)
            for event in conn.receive_data(data):
                if isinstance(event, h2.events.StreamReset):
                    print("reset", int(event.error_code), flush=True)
                    sys.exit(0)
            sock.sendall(conn.data_to_send())
            continue
        conn.send_data(1, chunk[:room])
        sock.sendall(conn.data_to_send())
        sent += room
    print("sent all", flush=True)
    sys.exit(0)
echoed = bytearray()


def echo(event):
    if isinstance(event, h2.events.DataReceived):
        echoed.extend(event.data)
    return isinstance(event, h2.events.StreamEnded) or bytes(echoed) == b"hello"


conn.send_data(1, b"hello")
sock.sendall(conn.data_to_send())
read_until(echo)
conn.send_data(1, b" tunnel", end_stream=True)
sock.sendall(conn.data_to_send())
read_until(lambda e: echo(e) and isinstance(e, h2.events.StreamEnded))
print("echo", bytes(echoed).decode(), flush=True)
print("ended", flush=True)
