"""The ASGI application hypercorn serves in interop_python.rs: GET /1k and
/big answer 1 KiB and 300 KiB, POST /up reads the whole body and answers
201 with 1 KiB, GET /slow answers 1 KiB after 200 ms; anything else is
404."""
import asyncio

BODIES = {("GET", "/1k"): (200, b"a" * 1024), ("GET", "/big"): (200, b"b" * 300 * 1024),
          ("POST", "/up"): (201, b"c" * 1024), ("GET", "/slow"): (200, b"d" * 1024)}


async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    while (await receive()).get("more_body"):
        pass
    if scope["path"] == "/slow":
        await asyncio.sleep(0.2)
    status, body = BODIES.get((scope["method"], scope["path"]), (404, b""))
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/octet-stream")]})
    await send({"type": "http.response.body", "body": body})
