#!/usr/bin/env python3
"""The floor under bench/stream's "server CPU per delivered event": one send() of one event's chunk to each of N
loopback TCP connections, as the server does when a post fans out to N streams, with nothing else around it.

    python3 bench/stream/send_floor.py [N] [ROUNDS] [BYTES]     defaults: 2,000 connections, 50 rounds, 320 bytes

Each round sends BYTES to every connection from this process (the server's side), and a child process drains the
other ends (the clients' side), as the stream bench's client does. It prints the sending process's CPU (user + system) per send; the
readers run in a child process. On loopback the receiving side's TCP processing runs inside the sender's send() (softirq), so this
is the least a server can spend per delivered event when each event is its own write: what `StreamHub` does for a post
that arrives alone. Events that arrive together could share one write per stream; a lone event cannot.
"""
import os, resource, selectors, socket, sys, time

N = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 50
BYTES = int(sys.argv[3]) if len(sys.argv) > 3 else 320

soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, 2 * N + 64)), hard))

listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen(N)
port = listener.getsockname()[1]
senders, readers = [], []
for _ in range(N):
    c = socket.create_connection(("127.0.0.1", port))
    s, _ = listener.accept()
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    senders.append(s)
    c.setblocking(False)
    readers.append(c)

expected = N * ROUNDS * BYTES
ready_r, ready_w = os.pipe()
child = os.fork()
if child == 0:
    # The clients' side, in a process of its own (as bench/stream's client is): its CPU is not the server's.
    for s in senders:
        s.close()
    sel = selectors.DefaultSelector()
    for r in readers:
        sel.register(r, selectors.EVENT_READ)
    os.write(ready_w, b"r")
    received = 0
    deadline = time.monotonic() + 300
    while received < expected and time.monotonic() < deadline:
        for key, _ in sel.select(timeout=5):
            try:
                received += len(key.fileobj.recv(65536))
            except BlockingIOError:
                pass
    os._exit(0 if received == expected else 1)

for r in readers:
    r.close()
os.read(ready_r, 1)
payload = b"x" * BYTES
start = resource.getrusage(resource.RUSAGE_SELF)
wall = time.monotonic()
for _ in range(ROUNDS):
    for s in senders:
        s.sendall(payload)
end = resource.getrusage(resource.RUSAGE_SELF)
wall = time.monotonic() - wall
_, status = os.waitpid(child, 0)
sends = N * ROUNDS
cpu = (end.ru_utime - start.ru_utime) + (end.ru_stime - start.ru_stime)
print(f"{sends:,} sends of {BYTES} B to {N:,} loopback connections in {wall:.2f} s; the reader got every byte: {os.waitstatus_to_exitcode(status) == 0}")
print(f"sender CPU per send: {cpu / sends * 1e6:.1f} µs "
      f"(user {(end.ru_utime - start.ru_utime) / sends * 1e6:.1f}, system {(end.ru_stime - start.ru_stime) / sends * 1e6:.1f}); "
      f"load {os.getloadavg()[0]:.2f}")
