"""The egress bench's HTTP client, one process that lives for the whole group (scripts/bench/egress.ts).

It reads one command a line on stdin and answers one line on stdout, so that what is timed is the
requests themselves, never the start of a process or a docker exec:

    MODE COUNT HOST PORT TARGET_HOST TARGET_PORT PATH

MODE is `direct` (a GET to HOST:PORT), `http` (HOST:PORT is the proxy: a GET in absolute form for
http://TARGET_HOST:TARGET_PORT/PATH) or `connect` (HOST:PORT is the proxy: CONNECT to the target,
then the same GET through the tunnel) or `tls` (the same CONNECT, then TLS for TARGET_HOST, verified
with the default authorities (SSL_CERT_FILE) and the file BENCH_CA names, and a GET with
`Authorization: Bearer $TOKEN`: a bound secret's request). A HOST that starts with / is a unix socket's path (PORT is
then ignored). Each of the COUNT requests opens a new connection, and its
time runs from before connect() to the last byte of the body. The answer:

    ok STATUS BYTES CRC32 MS MS ...

with the status, body length and CRC-32 of the last response (computed after its time was taken).
"""

import os
import socket
import ssl
import sys
import time
import zlib

buffer = bytearray(1 << 16)
tls_context = None


def tls(sock, name):
    global tls_context
    if tls_context is None:
        tls_context = ssl.create_default_context()
        if os.environ.get("BENCH_CA"):
            tls_context.load_verify_locations(cafile=os.environ["BENCH_CA"])
    return tls_context.wrap_socket(sock, server_hostname=name)


def read_head(sock, pending):
    while b"\r\n\r\n" not in pending:
        chunk = sock.recv(65536)
        if not chunk:
            raise RuntimeError("connection closed before the end of the head: %r" % bytes(pending[:200]))
        pending += chunk
    end = pending.index(b"\r\n\r\n") + 4
    return bytes(pending[:end]), pending[end:]


def request(mode, host, port, target_host, target_port, path):
    global buffer
    authority = "%s:%s" % (target_host, target_port)
    if host.startswith("/"):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    else:
        sock = socket.create_connection((host, port))
    try:
        if host.startswith("/"):
            # A socket's path holds at most 108 bytes: connect from its folder.
            os.chdir(os.path.dirname(host))
            sock.connect(os.path.basename(host))
        else:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        pending = bytearray()
        if mode in ("connect", "tls"):
            sock.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (authority, authority)).encode())
            head, pending = read_head(sock, pending)
            if not head.startswith(b"HTTP/1.1 200"):
                raise RuntimeError("CONNECT answered %r" % head[:200])
        auth = ""
        if mode == "tls":
            if pending:
                raise RuntimeError("bytes after the CONNECT answer")
            sock = tls(sock, target_host)
            auth = "Authorization: Bearer %s\r\n" % os.environ["TOKEN"]
        target = "http://%s%s" % (authority, path) if mode == "http" else path
        sock.sendall(("GET %s HTTP/1.1\r\nHost: %s\r\n%sConnection: close\r\n\r\n" % (target, authority, auth)).encode())
        head, pending = read_head(sock, pending)
        status = int(head.split(b" ", 2)[1])
        length = None
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
        if length is None:
            raise RuntimeError("no content-length in %r" % head[:300])
        if len(buffer) < length:
            buffer = bytearray(length)
        view = memoryview(buffer)
        got = len(pending)
        view[:got] = pending
        while got < length:
            n = sock.recv_into(view[got:length])
            if n == 0:
                raise RuntimeError("connection closed after %d of %d bytes" % (got, length))
            got += n
        return status, length
    finally:
        sock.close()


def main():
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        try:
            mode, count, host, port, target_host, target_port, path = words
            times = []
            status = length = 0
            for _ in range(int(count)):
                started = time.perf_counter()
                status, length = request(mode, host, int(port), target_host, int(target_port), path)
                times.append((time.perf_counter() - started) * 1000)
            crc = zlib.crc32(memoryview(buffer)[:length])
            print("ok %d %d %d %s" % (status, length, crc, " ".join("%.4f" % value for value in times)), flush=True)
        except Exception as error:  # the bench counts it as the arm's error
            print("error %s" % str(error).replace("\n", " "), flush=True)


main()
