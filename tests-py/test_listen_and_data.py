"""An operator's first hour (PROTOCOL 14): `--listen` where asked, one hub per `--data`.

`--listen localhost:PORT` and `[::1]:PORT` really listen (and say where); an address of
no interface here (192.0.2.1, TEST-NET-1), a port in use and a name that does not resolve
are, for `--listen` and `--osmand-listen` alike, exactly one line on stderr (the hub's own,
naming the address and why; libwebsockets' lines only at `--log-level debug`) and exit 2;
a second `serve` on the data directory of a running hub exits 2 naming it, and the first
hub carries on with every acked fix.

The name that does not resolve is `no!such!host`: not a valid host name, so glibc's
resolver refuses it before asking DNS (`strace getent ahosts 'no!such!host'` sends no
query), while a well-formed unknown name (`x.invalid`) would send a query off the machine.
"""

import os
import tempfile
import socket
import unittest

import hubproc
from hubproc import HubProcess, now_ms


def setUpModule():
    hubproc.require_binary()


def has_ipv6_loopback():
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


class TestListen(unittest.TestCase):
    def test_localhost_is_resolved_and_served(self):
        hub = HubProcess(listen="localhost:0").start()
        try:
            self.assertEqual(hub.host, "127.0.0.1", "the listening line names the address")
            status, doc, _ = hub.http("GET", "/healthz")
            self.assertEqual((status, doc["status"]), (200, "ok"))
        finally:
            hub.stop()

    @unittest.skipUnless(has_ipv6_loopback(), "no IPv6 loopback on this machine")
    def test_ipv6_loopback_in_brackets(self):
        hub = HubProcess(listen="[::1]:0").start()
        try:
            self.assertEqual(hub.host, "[::1]")
            status, _, _ = hub.http("GET", "/healthz")
            self.assertEqual(status, 200)
            with self.assertRaises(OSError):  # IPv6 only: not reachable over IPv4
                socket.create_connection(("127.0.0.1", hub.port), timeout=2).close()
        finally:
            hub.stop()

    def run_serve(self, *flags):
        """`trackhub serve FLAGS` on a fresh data directory, run to its end (an open hub:
        its OPEN MODE warning must not come before a start that fails)."""
        with tempfile.TemporaryDirectory() as tmp:
            return hubproc.run_cli(["serve", *flags, "--data", os.path.join(tmp, "d")], timeout=30)

    def assert_one_line_exit_2(self, result, *expected):
        """PROTOCOL 14: exit 2, nothing listening, and stderr exactly one line, holding
        every one of `expected` (the flag or the address, and why)."""
        self.assertEqual(result.returncode, 2, result.stderr)
        self.assertNotIn("listening on", result.stdout)
        lines = result.stderr.splitlines()
        self.assertEqual(len(lines), 1, "stderr is not one line:\n" + result.stderr)
        self.assertTrue(lines[0].startswith("trackhub serve: "), lines[0])
        for text in expected:
            self.assertIn(text, lines[0])

    def test_address_of_no_interface_is_one_line_and_exit_2(self):
        self.assert_one_line_exit_2(self.run_serve("--listen", "192.0.2.1:18555"),
                                    "192.0.2.1:18555", "not one of this machine's")

    def test_port_in_use_is_one_line_and_exit_2(self):
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            port = taken.getsockname()[1]
            self.assert_one_line_exit_2(self.run_serve("--listen", f"127.0.0.1:{port}"),
                                        f"127.0.0.1:{port}", "in use")
            # The library's own account is not lost: at debug it is in the log, as debug lines.
            result = self.run_serve("--listen", f"127.0.0.1:{port}", "--log-level", "debug")
            self.assertEqual(result.returncode, 2)
            lines = result.stderr.splitlines()
            self.assertIn(f"could not listen on 127.0.0.1:{port}", lines[-1])
            lws = [line for line in lines if "source=lws" in line and str(port) in line]
            self.assertTrue(lws, "no lws line about the port at debug:\n" + result.stderr)
            self.assertTrue(all(" debug " in line for line in lws), "\n".join(lws))

    def test_unknown_name_is_one_line_and_exit_2(self):
        self.assert_one_line_exit_2(self.run_serve("--listen", "no!such!host:8080"),
                                    "--listen", "no!such!host", "does not resolve")

    def test_unbindable_osmand_listen_is_one_line_and_exit_2(self):
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            port = taken.getsockname()[1]
            self.assert_one_line_exit_2(
                self.run_serve("--listen", "127.0.0.1:0", "--osmand-listen", f"127.0.0.1:{port}"),
                f"127.0.0.1:{port}", "in use")
        self.assert_one_line_exit_2(
            self.run_serve("--listen", "127.0.0.1:0", "--osmand-listen", "192.0.2.1:5055"),
            "192.0.2.1:5055", "not one of this machine's")
        self.assert_one_line_exit_2(
            self.run_serve("--listen", "127.0.0.1:0", "--osmand-listen", "no!such!host:5055"),
            "--osmand-listen", "no!such!host", "does not resolve")

    def test_not_host_port_exits_2(self):
        for listen in ["[::1]", "localhost", "127.0.0.1:99999", "::1:8080"]:
            with self.subTest(listen=listen):
                result = hubproc.run_cli(["serve", "--listen", listen])
                self.assertEqual(result.returncode, 2)
                self.assertIn("--listen", result.stderr)


class TestOneHubPerDataDirectory(unittest.TestCase):
    def test_second_hub_on_the_same_data_exits_2_and_the_first_loses_nothing(self):
        hub = HubProcess().start()
        try:
            hub.create_trip(id="kept", route=[[24.90, 60.10], [24.95, 60.10]])
            start = now_ms() - 60_000
            fixes = [{"seq": i, "lat": 60.10, "lon": 24.90 + i * 0.0005, "ts": start + i * 1000} for i in range(20)]
            status, doc, _ = hub.http("POST", "/v1/trips/kept/fixes", {"fixes": fixes})
            self.assertEqual(status, 200)
            data = os.path.join(hub._tmp.name, "data")
            result = hubproc.run_cli(["serve", "--listen", "127.0.0.1:0", "--data", data], timeout=30)
            self.assertEqual(result.returncode, 2)
            self.assertNotIn("listening on", result.stdout)
            self.assertEqual(len(result.stderr.splitlines()), 1, result.stderr)  # one line (PROTOCOL 14)
            self.assertIn(data, result.stderr)
            self.assertIn("in use", result.stderr)
            # The first hub carries on: more fixes acked, all of them in the trail.
            more = [{"seq": 20 + i, "lat": 60.10, "lon": 24.91 + i * 0.0005, "ts": start + (20 + i) * 1000} for i in range(5)]
            status, _, _ = hub.http("POST", "/v1/trips/kept/fixes", {"fixes": more})
            self.assertEqual(status, 200)
            status, trail, _ = hub.http("GET", "/v1/trips/kept/trail")
            self.assertEqual(status, 200)
            self.assertEqual(len(trail["properties"]["ts"]), 25)
        finally:
            hub.stop()


if __name__ == "__main__":
    unittest.main()
