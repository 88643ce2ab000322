#!/usr/bin/env python3
"""The fastest webhook this machine can run in Python: answers every POST with 200 and counts it (HTTP/1.1,
keep-alive, asyncio, no verification). GET /count returns {"count", "first", "last"} (UNIX seconds of the first
and last POST). For benchmarks only: scripts/bench-notifications.sh. The first stdout line is `listening URL`.
"""
import asyncio
import json
import sys
import time

seen = {"count": 0, "first": None, "last": None}


async def handle(reader, writer):
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
            if length:
                await reader.readexactly(length)
            if head.startswith(b"GET /count"):
                body = json.dumps(seen).encode()
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
            else:
                now = time.time()
                seen["count"] += 1
                seen["first"] = seen["first"] or now
                seen["last"] = now
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
            await writer.drain()
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError, ValueError):
        pass
    writer.close()


async def main():
    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    print(f"listening http://127.0.0.1:{server.sockets[0].getsockname()[1]}/", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
