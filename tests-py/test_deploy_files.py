"""Checks of the deployment files in deploy/ (docs/operations.md).

Each check uses a tool that a fresh machine may not have (nginx, haproxy,
systemd-analyze, openssl, PyYAML, hadolint); without it the check is skipped with a
message saying what is missing. Nothing here installs anything, builds an image or
needs the hub binary.
"""
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
DEPLOY = os.path.join(ROOT, "deploy")
SHUTDOWN_TIMEOUT_S = 10  # the hub's default --shutdown-timeout (PROTOCOL 9)

try:
    import yaml  # PyYAML
except ImportError:  # pragma: no cover - depends on the machine
    yaml = None


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
        for p in ("libwebsockets-dev", "libsqlite3-dev", "libssl-dev", "libhiredis-dev", "pkg-config"):
            self.assertIn(p, packages)
        runs = " ".join(self.instructions(build, "RUN"))
        self.assertIn("swift build -c release --static-swift-stdlib", runs)

    def test_runtime_stage_installs_the_evlib_plugin(self):
        runtime = self.stages[-1]
        packages = self.apt_packages(runtime)
        # Without the plugin lws_create_context fails: "unable to load evlib plugin evlib_ev".
        self.assertIn("libwebsockets-evlib-ev", packages)
        # libhiredis0.14: the runtime of Debian 12's libhiredis-dev (0.14.1).
        for p in ("libwebsockets17", "libsqlite3-0", "libhiredis0.14", "libssl3", "libjs-leaflet",
                  "ca-certificates"):
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

    def test_hadolint(self):
        if shutil.which("hadolint") is None:
            self.skipTest("hadolint not installed")
        r = subprocess.run(["hadolint", "--failure-threshold", "error", os.path.join(DEPLOY, "Dockerfile")],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)


@unittest.skipIf(yaml is None, "PyYAML not installed (pip install pyyaml): YAML files not checked")
class ComposeTest(unittest.TestCase):
    def setUp(self):
        self.doc = yaml.safe_load(read("compose.yaml"))

    def test_services(self):
        services = self.doc["services"]
        self.assertEqual(set(services), {"hub", "nginx"}, "one hub and nginx (cluster layout stays commented out)")
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

    def test_no_cluster_flag_in_live_config(self):
        # The hub refuses --cluster today; it may only appear in comments.
        for line in read("compose.yaml").splitlines():
            if "--cluster" in line:
                self.assertTrue(line.lstrip().startswith("#"), line)


@unittest.skipIf(yaml is None, "PyYAML not installed (pip install pyyaml): YAML files not checked")
class KubernetesTest(unittest.TestCase):
    def setUp(self):
        self.docs = {}
        kdir = os.path.join(DEPLOY, "kubernetes")
        for name in sorted(os.listdir(kdir)):
            if name.endswith(".yaml"):
                for doc in yaml.safe_load_all(read("kubernetes", name)):
                    if doc:
                        self.docs.setdefault(doc["kind"], []).append((name, doc))

    def test_every_manifest_has_the_basic_keys(self):
        for kind, docs in self.docs.items():
            for name, doc in docs:
                self.assertIn("apiVersion", doc, name)
                if kind == "Kustomization":
                    for res in doc["resources"]:
                        self.assertTrue(os.path.isfile(os.path.join(DEPLOY, "kubernetes", res)), res)
                    continue
                self.assertIn("name", doc["metadata"], name)
                if kind not in ("Namespace", "Secret", "ConfigMap"):
                    self.assertIn("spec", doc, name)

    def test_statefulset(self):
        (_, sts), = self.docs["StatefulSet"]
        spec = sts["spec"]
        self.assertEqual(spec["replicas"], 1, "SQLite has one writer: one replica until cluster mode")
        self.assertTrue(spec["volumeClaimTemplates"])
        pod = spec["template"]["spec"]
        self.assertGreater(pod["terminationGracePeriodSeconds"], SHUTDOWN_TIMEOUT_S)
        (c,) = pod["containers"]
        for probe in ("readinessProbe", "livenessProbe"):
            self.assertEqual(c[probe]["httpGet"]["path"], "/healthz", probe)
        env = {e["name"]: e for e in c["env"]}
        self.assertEqual(env["TRACKHUB_JWT_SECRET"]["valueFrom"]["secretKeyRef"]["name"], "trackhub-jwt")
        self.assertIn("requests", c["resources"])
        mounts = {m["mountPath"]: m["name"] for m in c["volumeMounts"]}
        self.assertEqual(mounts["/var/lib/trackhub"], spec["volumeClaimTemplates"][0]["metadata"]["name"])
        self.assertTrue(all("--cluster" not in a for a in c.get("args", [])))
        services = [d for _, d in self.docs["Service"]]
        self.assertIn(spec["serviceName"], [s["metadata"]["name"] for s in services])
        secrets = [d["metadata"]["name"] for _, d in self.docs["Secret"]]
        self.assertIn("trackhub-jwt", secrets)

    def test_ingress_websocket_timeouts(self):
        (_, ing), = self.docs["Ingress"]
        a = ing["metadata"]["annotations"]
        self.assertGreater(int(a["nginx.ingress.kubernetes.io/proxy-read-timeout"]), 30)
        self.assertGreater(int(a["nginx.ingress.kubernetes.io/proxy-send-timeout"]), 30)


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
    def test_haproxy_c(self):
        if shutil.which("haproxy") is None:
            self.skipTest("haproxy not installed: haproxy.cfg not checked")
        tmp = tempfile.mkdtemp(prefix="trackhub-haproxy-")
        self.addCleanup(shutil.rmtree, tmp, True)
        certs = make_cert(tmp)
        if certs is None:
            self.skipTest("openssl not installed: no certificate for the bind line")
        text = read("haproxy", "haproxy.cfg")
        self.assertIn("option httpchk GET /healthz", text)
        self.assertIn("http-check expect status 200", text)
        self.assertRegex(text, r"timeout tunnel (\d{3,}|[4-9]\d)s")
        cfg = os.path.join(tmp, "haproxy.cfg")
        with open(cfg, "w") as f:
            f.write(text.replace("/etc/haproxy/certs/trackhub.pem", certs[2]))
        r = subprocess.run(["haproxy", "-c", "-f", cfg], capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertNotIn("[WARNING]", r.stdout + r.stderr)


class SystemdTest(unittest.TestCase):
    def test_unit_settings(self):
        text = read("systemd", "trackhub.service")
        settings = {}
        for line in text.splitlines():
            if "=" in line and not line.lstrip().startswith(("#", ";")):
                k, v = line.split("=", 1)
                settings.setdefault(k.strip(), []).append(v.strip())
        self.assertEqual(settings["Type"], ["simple"])
        self.assertEqual(settings["StateDirectory"], ["trackhub"])
        self.assertEqual(settings["KillSignal"], ["SIGTERM"])
        self.assertIn("-/etc/trackhub/env", settings["EnvironmentFile"])
        self.assertEqual(shlex.split(settings["ExecStart"][0]),
                         ["/usr/local/bin/trackhub", "serve", "--listen", "127.0.0.1:8080", "--data", "/var/lib/trackhub"])
        self.assertGreaterEqual(int(settings["LimitNOFILE"][0]), 65536)
        self.assertGreater(duration_s(settings["TimeoutStopSec"][0]), SHUTDOWN_TIMEOUT_S)
        for k in ("NoNewPrivileges", "PrivateTmp"):
            self.assertEqual(settings[k], ["yes"], k)
        self.assertEqual(settings["ProtectSystem"], ["strict"])
        self.assertNotIn("root", settings.get("User", ["root"]))

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


if __name__ == "__main__":
    unittest.main()
