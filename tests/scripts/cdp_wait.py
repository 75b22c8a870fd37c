#!/usr/bin/env python3
"""Waits, through Chromium's DevTools protocol, until a JavaScript expression is truthy in the
page a headless Chromium shows, and prints its value as JSON (standard library only: a minimal
WebSocket client). Used by serve_page.sh.

    cdp_wait.py DEVTOOLS_PORT EXPRESSION TIMEOUT_SECONDS
Exits 1 on timeout, printing the expression's last value.
"""
import base64
import json
import os
import socket
import struct
import sys
import time
import urllib.request


def page_socket_url(port, deadline):
    while time.time() < deadline:
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d/json/list" % port, timeout=2) as r:
                pages = [p for p in json.load(r) if p.get("type") == "page"]
            if pages:
                return pages[0]["webSocketDebuggerUrl"]
        except OSError:
            pass
        time.sleep(0.2)
    sys.exit("cdp_wait: no page on DevTools port %d" % port)


class WebSocket:
    def __init__(self, url):
        host_port, path = url[len("ws://"):].split("/", 1)
        host, port = host_port.split(":")
        self.sock = socket.create_connection((host, int(port)), timeout=30)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(("GET /%s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                           "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n" % (path, host_port, key)).encode())
        response = b""
        while b"\r\n\r\n" not in response:
            response += self.sock.recv(4096)
        assert response.startswith(b"HTTP/1.1 101"), response
        self.buffer = response.split(b"\r\n\r\n", 1)[1]

    def send(self, text):
        data = text.encode()
        mask = os.urandom(4)
        header = bytes([0x81])
        n = len(data)
        header += bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + struct.pack(">H", n) if n < 65536 else \
            bytes([0x80 | 127]) + struct.pack(">Q", n)
        self.sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def read(self, n):
        while len(self.buffer) < n:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("DevTools closed the connection")
            self.buffer += chunk
        out, self.buffer = self.buffer[:n], self.buffer[n:]
        return out

    def receive(self):
        message = b""
        while True:
            b0, b1 = self.read(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self.read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self.read(8))[0]
            message += self.read(n)
            if b0 & 0x80:
                return message.decode()


def main():
    port, expression, timeout = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
    deadline = time.time() + timeout
    ws = WebSocket(page_socket_url(port, deadline))
    value, call = None, 0
    while time.time() < deadline:
        call += 1
        ws.send(json.dumps({"id": call, "method": "Runtime.evaluate",
                            "params": {"expression": expression, "returnByValue": True}}))
        while True:
            reply = json.loads(ws.receive())
            if reply.get("id") == call:
                break
        value = reply.get("result", {}).get("result", {}).get("value")
        if value:
            print(json.dumps(value))
            return
        time.sleep(0.2)
    print(json.dumps(value))
    sys.exit(1)


if __name__ == "__main__":
    main()
