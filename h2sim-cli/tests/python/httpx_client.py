"""httpx (Python's HTTP/2 client, on the h2 package) against a server, for
interop_python.rs. Usage: httpx_client.py MODE CA BASE N CONCURRENCY, MODE
being h2 (TLS, ALPN), h2c (prior knowledge) or http1. Sends N requests,
CONCURRENCY at a time, cycling GET /1k, POST /up (100 KiB up) and GET /big,
on one connection; prints `ok N` or the failures, one per line."""
import asyncio
import sys

import httpx

WANTS = [("GET", "/1k", 200, 1024), ("POST", "/up", 201, 1024), ("GET", "/big", 200, 300 * 1024)]


async def main(mode, ca, base, n, concurrency):
    client = httpx.AsyncClient(
        http1=mode == "http1", http2=mode != "http1", verify=ca,
        limits=httpx.Limits(max_connections=1), timeout=30)
    upload = b"u" * 100 * 1024
    failures = []
    versions = set()
    gate = asyncio.Semaphore(concurrency)

    async def one(i):
        method, path, status, length = WANTS[i % len(WANTS)]
        async with gate:
            try:
                r = await client.request(method, base + path,
                                         content=upload if method == "POST" else None)
                versions.add(r.http_version)
                if (r.status_code, len(r.content)) != (status, length):
                    failures.append(f"{method} {path}: {r.status_code}, {len(r.content)} bytes")
            except Exception as e:  # every failure is reported, none raised
                failures.append(f"{method} {path}: {e!r}")

    async with client:
        await asyncio.gather(*(one(i) for i in range(n)))
    for failure in failures:
        print(failure)
    print(f"ok {n - len(failures)} over {','.join(sorted(versions))}")


asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])))
