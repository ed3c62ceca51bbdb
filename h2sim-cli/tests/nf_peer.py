"""A small NRF-like peer for h2sim client's tests (h2c, Python's h2).

    python3 nf_peer.py PORT STATS_FILE [--require-token]

- POST /oauth2/token (form-encoded client credentials, RFC 6749 §4.4.2) ->
  200 {"access_token": "tok-N", "token_type": "Bearer", "expires_in": 3600}
- NRF (TS 29.510): PUT/PATCH/DELETE /nnrf-nfm/v1/nf-instances/ID
  (201 with Location, 204, 204); a PATCH first notifies the subscriptions
  whose subscrCond.nfInstanceId is ID (NF_PROFILE_CHANGED, nfInstanceUri
  naming ID); GET /nnrf-disc/v1/nf-instances?target-nf-type=T
- UDM (TS 29.503): PUT /nudm-uecm/v1/UE/registrations/amf-3gpp-access
  (201), GET /nudm-sdm/v2/UE/am-data (200)
- POST .../subscriptions or .../sdm-subscriptions -> 201, Location
  .../ID, {"subscriptionId": ID, ...}; PATCH .../ID first POSTs a
  notification to its callbackReference (notifyItems naming the UE) or
  nfStatusNotificationUri (naming ID) and waits for the answer, then 200;
  DELETE .../ID -> 204 (404 when unknown)
- /reset... -> RST_STREAM (INTERNAL_ERROR) instead of an answer
- anything else -> 404
Notifications go out over h2c, one connection each, before the request
that triggered them is answered.
With --require-token every request but the token's needs
`authorization: Bearer tok-...` (401 otherwise). After each request the
counts go to STATS_FILE as JSON. Prints "ready" once listening.
"""

import json
import socket
import sys
import threading
import urllib.parse

import h2.config
import h2.connection
import h2.events

PORT = int(sys.argv[1])
STATS_FILE = sys.argv[2]
REQUIRE_TOKEN = "--require-token" in sys.argv[3:]

lock = threading.Lock()
stats = {
    "requests": [],
    "tokens": 0,
    "token_forms": [],
    "bearers": [],
    "notifications": [],
}
subscriptions = {}
instances = {}


def notify_one(uri, body):
    status = notify(uri, body)
    with lock:
        stats["notifications"].append(status)


def save():
    with open(STATS_FILE + ".tmp", "w") as f:
        json.dump(stats, f)
    import os

    os.replace(STATS_FILE + ".tmp", STATS_FILE)


def notify(uri, body):
    """POSTs a notification over h2c; returns the answer's status."""
    parts = urllib.parse.urlsplit(uri)
    sock = socket.create_connection((parts.hostname, parts.port))
    conn = h2.connection.H2Connection(
        h2.config.H2Configuration(client_side=True, header_encoding="utf-8")
    )
    conn.initiate_connection()
    data = json.dumps(body).encode()
    conn.send_headers(
        1,
        [
            (":method", "POST"),
            (":scheme", "http"),
            (":authority", parts.netloc),
            (":path", parts.path or "/"),
            ("content-type", "application/json"),
            ("content-length", str(len(data))),
            ("3gpp-sbi-callback", "Nnrf_NFManagement_NFStatusNotify"),
        ],
    )
    conn.send_data(1, data, end_stream=True)
    sock.sendall(conn.data_to_send())
    status = None
    done = False
    while not done:
        chunk = sock.recv(65535)
        if not chunk:
            break
        for ev in conn.receive_data(chunk):
            if isinstance(ev, h2.events.ResponseReceived):
                status = int(dict(ev.headers)[":status"])
            elif isinstance(ev, (h2.events.StreamEnded, h2.events.StreamReset)):
                done = True
        sock.sendall(conn.data_to_send())
    conn.close_connection()
    try:
        sock.sendall(conn.data_to_send())
    except OSError:
        pass
    sock.close()
    return status


def handle(headers, body):
    """The answer to one request: (status, extra headers, body bytes)."""
    method, path = headers[":method"], headers[":path"]
    auth = headers.get("authorization")
    with lock:
        stats["requests"].append(f"{method} {path}")
        if auth:
            stats["bearers"].append(auth)
    if path == "/oauth2/token" and method == "POST":
        form = urllib.parse.parse_qs(body.decode())
        with lock:
            stats["token_forms"].append({k: v[0] for k, v in form.items()})
            if form.get("grant_type") != ["client_credentials"]:
                return 400, [], b'{"error":"unsupported_grant_type"}'
            stats["tokens"] += 1
            token = f"tok-{stats['tokens']}"
        reply = {"access_token": token, "token_type": "Bearer", "expires_in": 3600}
        return 200, [("content-type", "application/json")], json.dumps(reply).encode()
    if REQUIRE_TOKEN and not (auth or "").startswith("Bearer tok-"):
        return 401, [("www-authenticate", 'Bearer error="invalid_token"')], b""
    created = lambda location, reply: (
        201,
        [("content-type", "application/json"), ("location", location)],
        json.dumps(reply).encode(),
    )
    origin = f"http://{headers[':authority']}"
    segments = path.split("?")[0].strip("/").split("/")
    # NRF NF management: register (PUT), heartbeat (PATCH), deregister.
    if path.startswith("/nnrf-nfm/v1/nf-instances/"):
        nf_id = segments[-1]
        with lock:
            known = nf_id in instances
        if method == "PUT":
            profile = json.loads(body or b"{}")
            with lock:
                instances[nf_id] = profile
            if known:
                return 200, [("content-type", "application/json")], json.dumps(profile).encode()
            return created(origin + path, profile)
        if not known:
            return 404, [], b""
        if method == "PATCH":
            with lock:
                watching = [
                    s
                    for s in subscriptions.values()
                    if s.get("subscrCond", {}).get("nfInstanceId") == nf_id
                ]
            for sub in watching:
                notify_one(
                    sub["nfStatusNotificationUri"],
                    {
                        "event": "NF_PROFILE_CHANGED",
                        "nfInstanceUri": f"{origin}/nnrf-nfm/v1/nf-instances/{nf_id}",
                    },
                )
            return 204, [], b""
        if method == "DELETE":
            with lock:
                instances.pop(nf_id, None)
            return 204, [], b""
    # NRF discovery: every registered instance of the target type.
    if path.startswith("/nnrf-disc/v1/nf-instances?") and method == "GET":
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(path).query)
        target = query.get("target-nf-type", [""])[0]
        with lock:
            found = [p for p in instances.values() if p.get("nfType") == target]
        reply = {"validityPeriod": 3600, "nfInstances": found}
        return 200, [("content-type", "application/json")], json.dumps(reply).encode()
    # UDM UE context management and subscriber data.
    if path.startswith("/nudm-uecm/v1/") and segments[-2:] == ["registrations", "amf-3gpp-access"]:
        if method == "PUT":
            return created(origin + path, json.loads(body or b"{}"))
    if path.startswith("/nudm-sdm/v2/") and segments[-1] == "am-data" and method == "GET":
        reply = {"gpsis": ["msisdn-0109200000001"], "subscribedUeAmbr": {"uplink": "1 Gbps", "downlink": "2 Gbps"}}
        return 200, [("content-type", "application/json")], json.dumps(reply).encode()
    # Subscriptions (NRF's and UDM SDM's): POST creates, PATCH notifies
    # (UDM) or updates, DELETE removes.
    if method == "POST" and segments[-1] in ("subscriptions", "sdm-subscriptions"):
        request = json.loads(body or b"{}")
        with lock:
            stats["created"] = stats.get("created", 0) + 1
            sub_id = f"sub-{stats['created']}"
            subscriptions[sub_id] = dict(request, _path=path)
        return created(f"{origin}{path}/{sub_id}", dict(request, subscriptionId=sub_id))
    if len(segments) >= 2 and segments[-2] in ("subscriptions", "sdm-subscriptions"):
        sub_id = segments[-1]
        with lock:
            sub = subscriptions.get(sub_id)
        if sub is None:
            return 404, [], b""
        if method == "PATCH":
            if sub.get("callbackReference"):
                resource = sub["_path"].rsplit("/", 1)[0] + "/am-data"
                notify_one(
                    sub["callbackReference"],
                    {"notifyItems": [{"resourceId": origin + resource, "changes": []}]},
                )
            elif sub.get("nfStatusNotificationUri"):
                notify_one(
                    sub["nfStatusNotificationUri"],
                    {
                        "event": "NF_PROFILE_CHANGED",
                        "nfInstanceUri": f"http://nrf/nnrf-nfm/v1/subscriptions/{sub_id}",
                    },
                )
            reply = {k: v for k, v in sub.items() if k != "_path"}
            return 200, [("content-type", "application/json")], json.dumps(reply).encode()
        if method == "DELETE":
            with lock:
                subscriptions.pop(sub_id, None)
            return 204, [], b""
    return 404, [], b""


def serve(sock):
    conn = h2.connection.H2Connection(
        h2.config.H2Configuration(client_side=False, header_encoding="utf-8")
    )
    conn.initiate_connection()
    sock.sendall(conn.data_to_send())
    streams = {}
    while True:
        try:
            data = sock.recv(65535)
        except OSError:
            break
        if not data:
            break
        for ev in conn.receive_data(data):
            if isinstance(ev, h2.events.RequestReceived):
                streams[ev.stream_id] = [dict(ev.headers), b""]
            elif isinstance(ev, h2.events.DataReceived):
                streams[ev.stream_id][1] += ev.data
                conn.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
            elif isinstance(ev, h2.events.StreamEnded):
                headers, body = streams.pop(ev.stream_id)
                if headers[":path"].startswith("/reset"):
                    with lock:
                        stats["requests"].append(f"{headers[':method']} {headers[':path']}")
                        save()
                    conn.reset_stream(ev.stream_id, error_code=2)
                    continue
                status, fields, reply = handle(headers, body)
                conn.send_headers(
                    ev.stream_id,
                    [(":status", str(status)), ("content-length", str(len(reply)))]
                    + fields,
                    end_stream=not reply,
                )
                if reply:
                    conn.send_data(ev.stream_id, reply, end_stream=True)
                with lock:
                    save()
        out = conn.data_to_send()
        if out:
            sock.sendall(out)
    sock.close()


def main():
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", PORT))
    listener.listen(64)
    with lock:
        save()
    print("ready", flush=True)
    while True:
        sock, _ = listener.accept()
        threading.Thread(target=serve, args=(sock,), daemon=True).start()


main()
