"""Clients for the inspector under load: N keep-alive HTTP/1.1 connections, all in one thread (asyncio).

Usage: inspector_clients.py PORT TOKEN CLIENTS SECONDS MODE
  MODE poll:  each client asks /api/status and /api/screenshot.png, then waits half a second.
  MODE flood: each client asks /api/status again as soon as the answer is in (requests per second).
Prints one JSON object: requests answered (by status code), errors, requests per second.
"""
import asyncio
import json
import sys
import time

port, token, clients, seconds, mode = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
counts = {}
errors = 0


async def get(reader, writer, path):
    writer.write(f"GET {path} HTTP/1.1\r\nHost: screen\r\nAuthorization: Bearer {token}\r\n\r\n".encode())
    await writer.drain()
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ")[1])
    length = next((int(l.split(":", 1)[1]) for l in lines if l.lower().startswith("content-length:")), None)
    if length is not None:
        await reader.readexactly(length)
    else:  # chunked
        while True:
            size = int((await reader.readuntil(b"\r\n")).strip(), 16)
            await reader.readexactly(size + 2)
            if size == 0:
                break
    counts[status] = counts.get(status, 0) + 1


async def client(end):
    global errors
    while time.monotonic() < end:
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 10)
            while time.monotonic() < end:
                await asyncio.wait_for(get(reader, writer, "/api/status"), 10)
                if mode == "poll":
                    await asyncio.wait_for(get(reader, writer, "/api/screenshot.png"), 10)
                    await asyncio.sleep(0.5)
            writer.close()
        except Exception:
            errors += 1
            await asyncio.sleep(0.1)


async def main():
    start = time.monotonic()
    end = start + seconds
    await asyncio.gather(*(client(end) for _ in range(clients)))
    elapsed = time.monotonic() - start
    answered = sum(counts.values())
    print(json.dumps({"answered": answered, "by_status": {str(k): v for k, v in counts.items()}, "errors": errors,
                      "requests_per_second": round(answered / elapsed, 1)}))

asyncio.run(main())
