"""An operator's first hour (PROTOCOL 14): `--listen` where asked, one hub per `--data`.

`--listen localhost:PORT` and `[::1]:PORT` really listen (and say where); an address of
no interface here (192.0.2.1, TEST-NET-1) and a port in use are a one-line error and exit
2; a second `serve` on the data directory of a running hub exits 2 naming it, and the
first hub carries on with every acked fix. No unknown name is tried: resolving one would
send a DNS query off the machine.
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

    def run_serve(self, listen, data):
        return hubproc.run_cli(["serve", "--listen", listen, "--data", data], timeout=30)

    def test_address_of_no_interface_exits_2(self):
        with tempfile.TemporaryDirectory() as tmp:
            result = self.run_serve("192.0.2.1:18555", os.path.join(tmp, "d"))
        self.assertEqual(result.returncode, 2)
        self.assertNotIn("listening on", result.stdout)
        last = result.stderr.strip().splitlines()[-1]
        self.assertIn("192.0.2.1:18555", last)

    def test_port_in_use_exits_2(self):
        hub = HubProcess().start()
        try:
            with tempfile.TemporaryDirectory() as tmp:
                result = self.run_serve(f"127.0.0.1:{hub.port}", os.path.join(tmp, "d"))
            self.assertEqual(result.returncode, 2)
            self.assertNotIn("listening on", result.stdout)
            self.assertIn(str(hub.port), result.stderr.strip().splitlines()[-1])
        finally:
            hub.stop()

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
