#!/usr/bin/env python3
"""HTTP/2 server on Python's `h2` package (cleartext, prior knowledge), run
by h2sim-tokio/tests/interop_python.rs against the h2sim client.

    h2_server.py

Listens on 127.0.0.1 on a free port and prints "PORT <n>" once ready.
Answers "/big/N" with N bytes (sent as the client's flow-control windows
allow), "/push" with a body and a pushed "/pushed.txt", a POST with its
own body, and anything else with "python <path>". One thread per
connection; it runs until killed.
"""

import socket
import sys
import threading

import h2.config
import h2.connection
import h2.events
import h2.exceptions


def serve(sock):
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False))
    conn.initiate_connection()
    sock.sendall(conn.data_to_send())
    requests = {}  # stream -> (headers, body so far)
    outgoing = {}  # stream -> bytes still to send

    def respond(stream, body, extra_headers=()):
        conn.send_headers(stream, [(":status", "200"), *extra_headers])
        outgoing[stream] = body

    def flush():
        for stream in list(outgoing):
            body = outgoing[stream]
            while body:
                window = min(conn.local_flow_control_window(stream), conn.max_outbound_frame_size)
                if window <= 0:
                    break
                chunk, body = body[:window], body[window:]
                conn.send_data(stream, chunk)
            if body:
                outgoing[stream] = body
            else:
                conn.end_stream(stream)
                del outgoing[stream]

    while True:
        data = sock.recv(65536)
        if not data:
            return
        for event in conn.receive_data(data):
            if isinstance(event, h2.events.RequestReceived):
                requests[event.stream_id] = (dict(event.headers), b"")
            elif isinstance(event, h2.events.DataReceived):
                head, body = requests[event.stream_id]
                requests[event.stream_id] = (head, body + event.data)
                conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            elif isinstance(event, h2.events.StreamEnded):
                head, body = requests.pop(event.stream_id)
                path = head[b":path"].decode()
                stream = event.stream_id
                if path.startswith("/big/"):
                    respond(stream, b"y" * int(path[5:]))
                elif path == "/push":
                    promised = conn.get_next_available_stream_id()
                    conn.push_stream(stream, promised, [
                        (":method", "GET"), (":scheme", "http"),
                        (":authority", head[b":authority"].decode()), (":path", "/pushed.txt"),
                    ])
                    respond(promised, b"pushed by python\n")
                    respond(stream, b"python /push\n")
                elif head[b":method"] == b"POST":
                    respond(stream, body)
                else:
                    respond(stream, f"python {path}".encode())
            elif isinstance(event, h2.events.ConnectionTerminated):
                sock.sendall(conn.data_to_send())
                return
        flush()
        sock.sendall(conn.data_to_send())


def main():
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    print(f"PORT {listener.getsockname()[1]}", flush=True)
    while True:
        sock, _ = listener.accept()
        threading.Thread(target=serve_safely, args=(sock,), daemon=True).start()


def serve_safely(sock):
    try:
        serve(sock)
    except (OSError, h2.exceptions.ProtocolError) as e:
        print(f"connection ended: {e!r}", file=sys.stderr, flush=True)
    finally:
        sock.close()


if __name__ == "__main__":
    main()
