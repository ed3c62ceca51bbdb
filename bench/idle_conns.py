#!/usr/bin/env python3
"""Opens N idle connections to a server on loopback and holds them.

h2c: each sends the HTTP/2 preface and an empty SETTINGS frame, then reads
what the server sends (its SETTINGS and the ACK); h2: the same over TLS
(ALPN h2, the server's certificate not checked). HTTP/1.1: each sends one
GET and reads the response head. The connections then stay open, idle,
until stdin closes or HOLD seconds pass; READY is printed once all are
established, so the caller can measure the server's memory.

usage: idle_conns.py PORT N h2c|h2|h1 HOLD_SECONDS
"""
import select
import socket
import ssl
import sys
import time

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
GET = b"GET / HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n"


def main():
    port, count, proto, hold = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
    hello = GET if proto == "h1" else PREFACE
    tls = None
    if proto == "h2":
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        tls.check_hostname = False
        tls.verify_mode = ssl.CERT_NONE
        tls.set_alpn_protocols(["h2"])
    deadline = time.monotonic() + hold
    conns = []
    for _ in range(count):
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        if tls:
            s = tls.wrap_socket(s, server_hostname="localhost")
        s.sendall(hello)
        conns.append(s)
    # Wait until every connection got an answer (SETTINGS / a response head).
    for s in conns:
        s.settimeout(10)
        got = s.recv(65536)
        if not got:
            sys.exit("the server closed a connection")
        if proto != "h1":
            # Ack the server's SETTINGS so it has nothing outstanding.
            s.sendall(bytes([0, 0, 0, 4, 1, 0, 0, 0, 0]))
    # Let the server take the acks, then report.
    time.sleep(0.5)
    print("READY", flush=True)
    while time.monotonic() < deadline:
        r, _, _ = select.select([sys.stdin], [], [], max(0.0, deadline - time.monotonic()))
        if r and not sys.stdin.readline():
            break
    for s in conns:
        s.close()


if __name__ == "__main__":
    main()
