"""Python's h2 (python-hyper/h2) as an HTTP/2 client of `h2sim server`,
its own header checks off, so that it can be a buggy client too.

Usage: h2_client.py HOST:PORT WORD...

The words describe the requests, each on a stream of its own, in order:
  request METHOD PATH   starts one (scheme http, authority x)
  field NAME VALUE      adds a field to its head, as given (Bad-Name stays)
  data TEXT             is its body
  trailer NAME VALUE    adds a trailer field, sent after the body
  linger                (last) keeps the connection after the last stream
All are sent at once; then it reads, printing `response STREAM STATUS` and
`reset STREAM CODE` as they come, until the last request's stream has
ended (`ended`), was reset (`reset`) or the server closed first (`cut`).
With `linger` it then reads on, answering what the server sends, until the
server closes, printing `goaway LAST CODE` for each GOAWAY, then `closed`;
a frame h2 refuses (it takes any frame after a GOAWAY for an error) raises.
"""

import socket
import sys

import h2.config
import h2.connection
import h2.events


def requests(words):
    """The requests the words describe: [head, data, trailers] each."""
    out = []
    words = iter(words)
    for word in words:
        if word == "request":
            method, path = next(words), next(words)
            head = [(":method", method), (":scheme", "http"), (":authority", "x"),
                    (":path", path)]
            out.append([head, None, []])
        elif word == "field":
            out[-1][0].append((next(words), next(words)))
        elif word == "data":
            out[-1][1] = next(words).encode()
        elif word == "trailer":
            out[-1][2].append((next(words), next(words)))
        else:
            sys.exit(f"h2_client.py: unknown word {word!r}")
    return out


def main():
    host, port = sys.argv[1].rsplit(":", 1)
    sock = socket.create_connection((host, int(port)))
    sock.settimeout(20)
    conn = h2.connection.H2Connection(h2.config.H2Configuration(
        client_side=True, validate_outbound_headers=False,
        normalize_outbound_headers=False))
    conn.initiate_connection()
    words = sys.argv[2:]
    linger = words[-1:] == ["linger"]
    streams = requests(words[:-1] if linger else words)
    for i, (head, data, trailers) in enumerate(streams):
        stream = 1 + 2 * i
        conn.send_headers(stream, head, end_stream=data is None and not trailers)
        if data is not None:
            conn.send_data(stream, data, end_stream=not trailers)
        if trailers:
            conn.send_headers(stream, trailers, end_stream=True)
    sock.sendall(conn.data_to_send())
    last = 2 * len(streams) - 1
    outcome = None
    while outcome is None:
        data = sock.recv(65536)
        if not data:
            break
        for event in conn.receive_data(data):
            if isinstance(event, h2.events.StreamReset):
                print("reset", event.stream_id, int(event.error_code))
                if event.stream_id == last:
                    outcome = "reset"
            elif isinstance(event, h2.events.ResponseReceived):
                print("response", event.stream_id, dict(event.headers)[b":status"].decode())
            elif isinstance(event, h2.events.StreamEnded) and event.stream_id == last:
                outcome = "ended"
        sock.sendall(conn.data_to_send())
    print(outcome or "cut")
    while linger and outcome is not None:
        data = sock.recv(65536)
        if not data:
            print("closed")
            break
        for event in conn.receive_data(data):
            if isinstance(event, h2.events.ConnectionTerminated):
                print("goaway", event.last_stream_id, int(event.error_code))
        sock.sendall(conn.data_to_send())
    sock.close()


main()
