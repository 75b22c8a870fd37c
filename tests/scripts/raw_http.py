# raw_http.py PORT [LATER]: sends stdin's bytes to 127.0.0.1:PORT as they are, then (half a second
# on, on the same connection) LATER's, and reads until the server closes or 10 s pass. Prints the
# status of each answer read, space-separated, or "closed" for none.
import socket
import sys
import time

s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
try:
    s.sendall(sys.stdin.buffer.read())
    if len(sys.argv) > 2:
        time.sleep(0.5)
        s.sendall(sys.argv[2].encode().decode("unicode_escape").encode("latin-1"))
except OSError:
    pass
s.settimeout(10)
data = b""
try:
    while chunk := s.recv(65536):
        data += chunk
except OSError:
    pass
statuses = [line.split(b" ")[1].decode() for line in data.split(b"\r\n") if line.startswith(b"HTTP/1.1 ")]
print(" ".join(statuses) if statuses else "closed")
