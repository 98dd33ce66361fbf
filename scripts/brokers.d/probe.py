#!/usr/bin/env python3
"""Protocol-level readiness probes for the broker lab (stdlib only).

Each probe speaks just enough of the broker's own protocol to prove that the
right broker is answering on the port, not merely that something listens:

    probe.py tcp HOST PORT            something accepts TCP connections
    probe.py redis HOST PORT          RESP PING answers +PONG (standalone, not a cluster node)
    probe.py redis-cluster HOST PORT  CLUSTER INFO says state ok with >= 3 masters
    probe.py amqp091 HOST PORT        AMQP 0-9-1 connection.start from RabbitMQ
    probe.py amqp10 HOST PORT         AMQP 1.0 SASL header echoed, mechanisms frame sent
    probe.py asb HOST PORT            the same, offering Service Bus's MSSBCBS mechanism (the stand-in)
    probe.py kafka HOST PORT          Metadata v1 lists a broker and an elected controller
    probe.py sqs HOST PORT            SQS query API answers ListQueues
    probe.py sqs-count HOST PORT      the same, printing how many queues it lists
    probe.py pulsar HOST PORT         admin API has public/default and the WebSocket API upgrades
    probe.py postgres HOST PORT       a startup message as user babelqueue reaches ReadyForQuery

Exit status 0 when ready; otherwise 1 with the reason on stderr.
"""
import base64
import os
import socket
import struct
import sys
import urllib.request

TIMEOUT = 3.0


class NotReady(Exception):
    pass


def connect(host, port):
    try:
        return socket.create_connection((host, port), timeout=TIMEOUT)
    except OSError as e:
        raise NotReady(f"cannot connect to {host}:{port}: {e.strerror or e}") from None


def read_exactly(sock, n):
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise NotReady("connection closed by peer")
        buf += chunk
    return buf


def read_some(sock, limit=65536):
    data = sock.recv(limit)
    if not data:
        raise NotReady("connection closed by peer")
    return data


def probe_tcp(host, port):
    connect(host, port).close()


def resp_command(host, port, *args):
    with connect(host, port) as s:
        cmd = f"*{len(args)}\r\n" + "".join(f"${len(a)}\r\n{a}\r\n" for a in args)
        s.sendall(cmd.encode())
        data = b""
        while b"\r\n" not in data:
            data += read_some(s)
        head, _, rest = data.partition(b"\r\n")
        if head.startswith(b"$") and int(head[1:]) >= 0:
            # Bulk string: read the announced length plus its CRLF.
            want = int(head[1:]) + 2
            while len(rest) < want:
                rest += read_some(s)
            return rest[:want - 2].decode(errors="replace")
        return head.decode(errors="replace")


def probe_redis(host, port):
    reply = resp_command(host, port, "PING")
    if not reply.startswith("+PONG"):
        raise NotReady(f"not a Redis server (PING answered {reply.strip()!r})")
    info = resp_command(host, port, "INFO", "cluster")
    if "cluster_enabled:1" in info:
        raise NotReady("a Redis Cluster node, not a standalone Redis")


def probe_redis_cluster(host, port):
    reply = resp_command(host, port, "CLUSTER", "INFO")
    if "cluster_state:" not in reply:
        raise NotReady(f"not a Redis Cluster node ({reply.strip()[:80]!r})")
    fields = dict(line.split(":", 1) for line in reply.splitlines() if ":" in line)
    if fields.get("cluster_state") != "ok":
        raise NotReady(f"cluster_state is {fields.get('cluster_state')}")
    if int(fields.get("cluster_size", "0")) < 3:
        raise NotReady(f"cluster has {fields.get('cluster_size')} masters, want 3")


def probe_amqp091(host, port):
    with connect(host, port) as s:
        s.sendall(b"AMQP\x00\x00\x09\x01")
        frame_type, _channel, size = struct.unpack(">BHI", read_exactly(s, 7))
        payload = read_exactly(s, size)
        class_id, method_id = struct.unpack(">HH", payload[:4])
        if frame_type != 1 or (class_id, method_id) != (10, 10):
            raise NotReady("no AMQP 0-9-1 connection.start")
        if b"RabbitMQ" not in payload:
            raise NotReady("AMQP 0-9-1 server is not RabbitMQ")


def probe_amqp10(host, port):
    with connect(host, port) as s:
        s.sendall(b"AMQP\x03\x01\x00\x00")
        header = read_exactly(s, 8)
        if header != b"AMQP\x03\x01\x00\x00":
            raise NotReady(f"no AMQP 1.0 SASL header (got {header!r})")
        size = struct.unpack(">I", read_exactly(s, 4))[0]
        frame = read_exactly(s, size - 4)
        # Frame type 1 is SASL; descriptor 0x40 is sasl-mechanisms.
        if frame[1] != 1 or b"\x53\x40" not in frame[:16]:
            raise NotReady("no AMQP 1.0 sasl-mechanisms frame")
        return frame


def probe_asb(host, port):
    if b"MSSBCBS" not in probe_amqp10(host, port):
        raise NotReady("an AMQP 1.0 server that does not offer MSSBCBS (not the Service Bus stand-in)")


def kafka_string(s):
    b = s.encode()
    return struct.pack(">h", len(b)) + b


def probe_kafka(host, port):
    with connect(host, port) as s:
        # Metadata v1, header v1 (api_key 3, version 1, correlation 7, client id), topics = null.
        body = struct.pack(">hhi", 3, 1, 7) + kafka_string("babelqueue-probe") + struct.pack(">i", -1)
        s.sendall(struct.pack(">i", len(body)) + body)
        size = struct.unpack(">i", read_exactly(s, 4))[0]
        r = read_exactly(s, size)
        correlation, brokers = struct.unpack(">ii", r[:8])
        if correlation != 7:
            raise NotReady("not a Kafka broker (bad correlation id)")
        if brokers < 1:
            raise NotReady("Kafka metadata lists no broker yet")
        off = 8
        for _ in range(brokers):
            off += 4
            hlen = struct.unpack(">h", r[off:off + 2])[0]
            off += 2 + hlen + 4
            rlen = struct.unpack(">h", r[off:off + 2])[0]
            off += 2 + max(rlen, 0)
        controller = struct.unpack(">i", r[off:off + 4])[0]
        if controller < 0:
            raise NotReady("Kafka has no active controller yet")


def http(url, data=None, headers=None):
    req = urllib.request.Request(url, data=data, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=TIMEOUT) as resp:
            return resp.status, resp.read().decode(errors="replace")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode(errors="replace")
    except (urllib.error.URLError, OSError) as e:
        raise NotReady(f"HTTP {url}: {getattr(e, 'reason', e)}") from None


def probe_sqs(host, port):
    status, body = http(f"http://{host}:{port}/", data=b"Action=ListQueues&Version=2012-11-05",
                        headers={"Content-Type": "application/x-www-form-urlencoded"})
    if status != 200 or "ListQueuesResponse" not in body:
        raise NotReady(f"not an SQS endpoint (HTTP {status})")
    return body.count("<QueueUrl>")


def probe_sqs_count(host, port):
    print(probe_sqs(host, port))


def probe_pulsar(host, port):
    status, body = http(f"http://{host}:{port}/admin/v2/namespaces/public")
    if status != 200 or "public/default" not in body:
        raise NotReady(f"Pulsar admin API not ready (HTTP {status})")
    with connect(host, port) as s:
        key = base64.b64encode(os.urandom(16)).decode()
        s.sendall((f"GET /ws/v2/producer/persistent/public/default/babelqueue-probe HTTP/1.1\r\n"
                   f"Host: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                   f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        status_line = read_some(s).split(b"\r\n", 1)[0].decode(errors="replace")
        if " 101 " not in status_line + " ":
            raise NotReady(f"Pulsar WebSocket API not ready ({status_line})")


def probe_postgres(host, port):
    # StartupMessage (protocol 3.0) for the lab's trust-authenticated user; the
    # server answers AuthenticationOk ... ReadyForQuery when it accepts queries.
    params = b"user\0babelqueue\0database\0postgres\0\0"
    sock = connect(host, port)
    try:
        sock.sendall(struct.pack("!ii", 8 + len(params), 196608) + params)
        while True:
            kind = read_exactly(sock, 1)
            length = struct.unpack("!i", read_exactly(sock, 4))[0]
            body = read_exactly(sock, length - 4)
            if kind == b"E":
                fields = dict((f[:1], f[1:]) for f in body.split(b"\0") if f)
                raise NotReady("postgres: " + fields.get(b"M", b"error").decode("utf-8", "replace"))
            if kind == b"R" and struct.unpack("!i", body[:4])[0] != 0:
                raise NotReady("postgres asks for a password: not the lab's cluster")
            if kind == b"Z":
                sock.sendall(b"X\0\0\0\4")
                return
    finally:
        sock.close()


PROBES = {
    "tcp": probe_tcp,
    "redis": probe_redis,
    "redis-cluster": probe_redis_cluster,
    "amqp091": probe_amqp091,
    "amqp10": probe_amqp10,
    "asb": probe_asb,
    "kafka": probe_kafka,
    "sqs": probe_sqs,
    "sqs-count": probe_sqs_count,
    "pulsar": probe_pulsar,
    "postgres": probe_postgres,
}


def main(argv):
    if len(argv) != 4 or argv[1] not in PROBES:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        PROBES[argv[1]](argv[2], int(argv[3]))
    except NotReady as e:
        print(e, file=sys.stderr)
        return 1
    except (OSError, struct.error, ValueError, IndexError) as e:
        print(f"unexpected answer: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
