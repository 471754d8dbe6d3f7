"""PROTOCOL 14's HTTP surface against the release binary: every route of /v1/openapi.json
walked against the running hub with its real answers validated against the document's
schemas; 405 with Allow; Location on 201; the GPX and CSV exports parsed.

    cd tests-py && TRACKHUB_BIN=$(cd .. && swift build -c release --show-bin-path) python3 -m unittest test_http_api -v
"""

import csv
import datetime
import io
import json
import unittest
import urllib.parse
import xml.etree.ElementTree as ET

import jsonschema
from openapi_spec_validator import validate as validate_spec

from hubproc import HubProcess, now_ms, require_binary

ROUTE = [[-9.1420, 38.7158], [-9.1360, 38.7180], [-9.1300, 38.7200]]
GPX_NS = {"gpx": "http://www.topografix.com/GPX/1/1"}
SECRET = "http-api-test-secret-of-32-bytes!"


def setUpModule():
    require_binary()


def encode_body(media, body):
    """A sample body in its media type: JSON, or a form (application/x-www-form-urlencoded)."""
    if media == "application/x-www-form-urlencoded":
        return urllib.parse.urlencode(body).encode()
    return json.dumps(body).encode()


def raw_request(hub, method, path, body=None, headers=None, media="application/json"):
    """Like hub.http, with the answer's headers: (status, headers (lower-case names), bytes).
    `body` is sent encoded as `media`."""
    import http.client
    conn = http.client.HTTPConnection(hub.host, hub.port, timeout=10)
    try:
        hdrs = dict(headers or {})
        data = None
        if body is not None:
            data = encode_body(media, body)
            hdrs["Content-Type"] = media
        conn.request(method, path, body=data, headers=hdrs)
        resp = conn.getresponse()
        payload = resp.read()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, payload
    finally:
        conn.close()


class OpenAPIWalkTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.hub = HubProcess().start()
        status, _, raw = cls.hub.http("GET", "/v1/openapi.json")
        assert status == 200, raw[:300]
        cls.doc = json.loads(raw)

    @classmethod
    def tearDownClass(cls):
        cls.hub.stop()

    def validate(self, operation, status, headers, payload, where):
        responses = operation["responses"]
        self.assertIn(str(status), responses, f"{where}: {status} is not documented: {payload[:300]!r}")
        documented = responses[str(status)]
        content = documented.get("content")
        if not content:
            self.assertEqual(payload, b"", where)
            return None
        media = headers.get("content-type", "").split(";")[0].strip()
        self.assertIn(media, content, f"{where}: content-type {media} is not documented")
        if media in ("application/json", "application/geo+json"):
            body = json.loads(payload)
            schema = dict(content[media]["schema"])
            schema["components"] = self.doc["components"]
            jsonschema.validate(body, schema, cls=jsonschema.Draft202012Validator)
            return body
        return payload

    def schema(self, ref_holder):
        """A schema of the document, made standalone (its $refs resolve)."""
        schema = dict(ref_holder)
        schema["components"] = self.doc["components"]
        return schema

    def test_every_post_and_put_documents_its_body(self):
        """PROTOCOL 14: every /v1 route's body is in the document; POST /v1/trips/{id}/proceed
        alone takes none (PROTOCOL 5)."""
        seen = 0
        for path, item in self.doc["paths"].items():
            for method in ("post", "put"):
                if method not in item or path == "/v1/trips/{id}/proceed":
                    continue
                seen += 1
                body = item[method].get("requestBody")
                self.assertIsNotNone(body, f"{method.upper()} {path} has no requestBody")
                self.assertTrue(body["content"], f"{method.upper()} {path}")
        self.assertGreaterEqual(seen, 7)
        owntracks = self.doc["paths"]["/v1/owntracks/{id}"]["post"]["requestBody"]
        self.assertEqual(set(owntracks["content"]), {"application/json"})
        osmand = self.doc["paths"]["/v1/osmand"]["post"]["requestBody"]
        self.assertEqual(set(osmand["content"]), {"application/x-www-form-urlencoded", "application/json"})

    def test_the_document_is_valid_openapi_3_1(self):
        validate_spec(self.doc)
        self.assertEqual(self.doc["openapi"], "3.1.0")
        for name in ("Trip", "TripList", "Trail", "Clusters", "Acks", "Error"):
            self.assertIn(name, self.doc["components"]["schemas"])

    def test_every_route_answers_as_documented(self):
        hub = self.hub
        ts = now_ms() - 120_000
        samples = {
            "CreateTrip": {"id": "W-new", "route": ROUTE},
            "Reroute": {"route": list(reversed(ROUTE))},
            "DevicePut": {"trip": "W1", "name": "walker"},
            "ShareCreate": {"ttl_s": 600},  # an open hub: 409, documented
            "FixBatch": {"fixes": [{"lat": 38.7158, "lon": -9.1420, "ts": ts, "seq": 1},
                                   {"lat": 38.7170, "lon": -9.1390, "ts": ts + 60_000, "seq": 2}]},
            # The phone doors (PROTOCOL 11), as device W1 (bound to trip W1 below).
            "OsmAndForm": {"id": "W1", "lat": 38.7175, "lon": -9.1380, "timestamp": (ts + 70_000) // 1000,
                           "speed": 10, "bearing": 90, "batt": 80},
            "OsmAndJSON": {"device_id": "W1", "location": {
                "timestamp": datetime.datetime.fromtimestamp((ts + 80_000) / 1000, datetime.timezone.utc).isoformat(),
                "coords": {"latitude": 38.7180, "longitude": -9.1370, "speed": 5, "heading": 80, "accuracy": 8},
                "battery": {"level": 0.79}}},
            "OwnTracksMessage": {"_type": "location", "lat": 38.7185, "lon": -9.1360, "tst": (ts + 90_000) // 1000,
                                 "acc": 10, "vel": 18, "batt": 78},
        }
        hub.create_trip(id="W1", route=ROUTE)
        hub.create_trip(id="W-end", route=ROUTE)
        status, _, raw = hub.http("PUT", "/v1/devices/W1", {"trip": "W1"})
        self.assertEqual(status, 200, raw)
        order = {"post": 0, "put": 1, "get": 2, "options": 3, "delete": 4}
        operations = [(path, method, op) for path, item in self.doc["paths"].items()
                      for method, op in item.items() if method in order]
        operations.sort(key=lambda x: (order[x[1]], "fixes" not in x[0]))
        walked = set()
        for path, method, op in operations:
            trip = "W-end" if method == "delete" else "W1"
            url = path.replace("{id}", trip)
            query = [f"{p['name']}=3" for p in op.get("parameters", []) if p.get("required") and p["in"] == "query"]
            if query:
                url += "?" + "&".join(query)
            # Each media type of the body, its sample valid against the documented schema.
            bodies = [(None, None)]
            if "requestBody" in op:
                bodies = []
                for media, content in op["requestBody"]["content"].items():
                    sample = samples[content["schema"]["$ref"].rsplit("/", 1)[1]]
                    jsonschema.validate(sample, self.schema(content["schema"]), cls=jsonschema.Draft202012Validator)
                    bodies.append((media, sample))
            for media, body in bodies:
                where = f"{method.upper()} {url} ({media})"
                status, headers, payload = raw_request(hub, method.upper(), url, body, media=media or "application/json")
                self.validate(op, status, headers, payload, where)
                if method != "options":
                    self.assertLess(status, 500, where)
                if path in ("/v1/osmand", "/v1/owntracks/{id}") and method == "post":
                    self.assertEqual(status, 200, f"{where}: a fix of a registered device: {payload[:300]!r}")
            walked.add((path, method))
        self.assertEqual(walked, {(p, m) for p, m, _ in operations})
        self.assertGreaterEqual(len(walked), 10)
        # Errors validate too: an unknown trip, a bad query, a wrong format.
        item = self.doc["paths"]
        for method, url, path, want in [
            ("get", "/v1/trips/nope", "/v1/trips/{id}", 404),
            ("get", "/v1/trips?limit=0", "/v1/trips", 400),
            ("get", "/v1/trips/W1/trail?format=kml", "/v1/trips/{id}/trail", 400),
            ("post", "/v1/trips/W1/proceed", "/v1/trips/{id}/proceed", 409),
        ]:
            status, headers, payload = raw_request(hub, method.upper(), url)
            self.assertEqual(status, want, url)
            body = self.validate(item[path][method], status, headers, payload, url)
            self.assertIn(body["error"]["code"], ("not_found", "bad_request", "conflict"))

    def test_a_secured_hub_documents_its_401_and_serves_the_document_without_a_token(self):
        hub = HubProcess("--jwt-secret", SECRET).start()
        try:
            status, _, raw = hub.http("GET", "/v1/openapi.json")
            self.assertEqual(status, 200)
            doc = json.loads(raw)
            status, headers, payload = raw_request(hub, "GET", "/v1/trips")
            self.assertEqual(status, 401)
            schema = dict(doc["paths"]["/v1/trips"]["get"]["responses"]["401"]["content"]["application/json"]["schema"])
            schema["components"] = doc["components"]
            jsonschema.validate(json.loads(payload), schema, cls=jsonschema.Draft202012Validator)
            status, headers, _ = raw_request(hub, "OPTIONS", "/v1/trips")
            self.assertEqual(status, 204)
        finally:
            hub.stop()


class HTTPSemanticsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.hub = HubProcess().start()

    @classmethod
    def tearDownClass(cls):
        cls.hub.stop()

    def test_a_wrong_method_is_405_with_allow(self):
        self.hub.create_trip(id="M1", route=ROUTE)
        for method, path, allow in [("PATCH", "/v1/trips", {"GET", "POST"}),
                                    ("PATCH", "/v1/trips/M1", {"GET", "DELETE"}),
                                    ("DELETE", "/v1/fleet/clusters", {"GET"}),
                                    ("GET", "/v1/trips/M1/fixes", {"POST"})]:
            status, headers, payload = raw_request(self.hub, method, path)
            self.assertEqual(status, 405, f"{method} {path}: {payload!r}")
            self.assertEqual({m.strip() for m in headers["allow"].split(",")} - {"OPTIONS"}, allow)
            self.assertIn(method, json.loads(payload)["error"]["message"])
        status, _, _ = raw_request(self.hub, "PATCH", "/v1/elsewhere")
        self.assertEqual(status, 404)

    def test_created_has_location(self):
        status, headers, payload = raw_request(self.hub, "POST", "/v1/trips", {"route": ROUTE})
        self.assertEqual(status, 201)
        trip = json.loads(payload)["trip"]
        self.assertEqual(headers["location"], f"/v1/trips/{trip}")
        status, _, payload = raw_request(self.hub, "GET", headers["location"])
        self.assertEqual((status, json.loads(payload)["trip"]), (200, trip))

    def test_exports_parse(self):
        self.hub.create_trip(id="E1", route=ROUTE)
        t0 = now_ms() - 600_000
        sent = [(38.7158 + i * 0.0002, -9.1420 + i * 0.0005, t0 + i * 30_000) for i in range(6)]
        fixes = [{"lat": lat, "lon": lon, "ts": ts, "seq": i} for i, (lat, lon, ts) in enumerate(sent)]
        status, acks, raw = self.hub.http("POST", "/v1/trips/E1/fixes", {"fixes": fixes})
        self.assertEqual(status, 200, raw)

        status, headers, payload = raw_request(self.hub, "GET", "/v1/trips/E1/trail")
        self.assertEqual(headers["content-type"], "application/geo+json")
        self.assertEqual(len(json.loads(payload)["properties"]["ts"]), len(sent))

        status, headers, payload = raw_request(self.hub, "GET", "/v1/trips/E1/trail?format=gpx")
        self.assertEqual(status, 200)
        self.assertTrue(headers["content-type"].startswith("application/gpx+xml"))
        root = ET.fromstring(payload)
        self.assertEqual(root.tag, "{http://www.topografix.com/GPX/1/1}gpx")
        self.assertEqual(root.get("version"), "1.1")
        points = root.findall("gpx:trk/gpx:trkseg/gpx:trkpt", GPX_NS)
        self.assertEqual(len(points), len(sent))
        for point, (lat, lon, ts) in zip(points, sent):
            self.assertAlmostEqual(float(point.get("lat")), lat, places=6)
            self.assertAlmostEqual(float(point.get("lon")), lon, places=6)
            when = datetime.datetime.fromisoformat(point.find("gpx:time", GPX_NS).text.replace("Z", "+00:00"))
            self.assertEqual(when.utcoffset(), datetime.timedelta(0))
            self.assertEqual(round(when.timestamp() * 1000), ts)

        status, headers, payload = raw_request(self.hub, "GET", "/v1/trips/E1/trail?format=csv")
        self.assertEqual(status, 200)
        self.assertTrue(headers["content-type"].startswith("text/csv"))
        rows = list(csv.reader(io.StringIO(payload.decode())))
        self.assertEqual(rows[0], ["ts", "lat", "lon", "reason", "altitude", "battery"])
        self.assertEqual(len(rows) - 1, len(sent))
        for row, (lat, lon, ts) in zip(rows[1:], sent):
            self.assertEqual(int(row[0]), ts)
            self.assertAlmostEqual(float(row[1]), lat, places=6)
            self.assertAlmostEqual(float(row[2]), lon, places=6)
            self.assertEqual(row[3:], ["", "", ""])

        status, _, payload = raw_request(self.hub, "GET", "/v1/trips/E1/trail?format=kml")
        self.assertEqual(status, 400)
        self.assertIn("format", json.loads(payload)["error"]["message"])

    def test_a_long_export_is_streamed_whole(self):
        # More than one page (2 000 fixes): sent chunked, every fix in it once.
        self.hub.create_trip(id="E2")
        t0 = now_ms() - 3 * 3_600_000
        fixes = [{"lat": 38.7 + i * 1e-5, "lon": -9.14, "ts": t0 + i * 1000, "seq": i} for i in range(4500)]
        status, _, raw = self.hub.http("POST", "/v1/trips/E2/fixes", {"fixes": fixes[:4500]}, timeout=60)
        self.assertEqual(status, 200, raw[:300])
        status, headers, payload = raw_request(self.hub, "GET", "/v1/trips/E2/trail?format=csv")
        self.assertEqual(headers.get("transfer-encoding"), "chunked")
        rows = list(csv.reader(io.StringIO(payload.decode())))
        self.assertEqual([int(r[0]) for r in rows[1:]], [f["ts"] for f in fixes])
        status, headers, payload = raw_request(self.hub, "GET", "/v1/trips/E2/trail?format=gpx")
        self.assertEqual(len(ET.fromstring(payload).findall(".//gpx:trkpt", GPX_NS)), len(fixes))


if __name__ == "__main__":
    unittest.main()
