"""CORS in a real browser (PROTOCOL 14): a page served from a second origin (a tiny
http.server on another loopback port) calls the release hub's `/v1` with `fetch`. With
`--allow-origin` set to the page's origin the preflight passes and the page reads the
answers (status, body, Location); without it the browser refuses the call and nothing
reaches the route. Waits are WebDriver's async-script deadline, never sleeps.

    cd tests-py && TRACKHUB_BIN=$(cd .. && swift build -c release --show-bin-path) python3 -m unittest browser.test_cors -v
"""

from __future__ import annotations

import http.server
import json
import os
import shutil
import sys
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PARENT = os.path.dirname(HERE)
if PARENT not in sys.path:
    sys.path.insert(0, PARENT)

from hubproc import HubProcess, mint_token, trackhub_binary  # noqa: E402

try:
    from selenium import webdriver
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.chrome.service import Service
    HAVE_SELENIUM = True
except ImportError:  # pragma: no cover
    HAVE_SELENIUM = False

CHROMIUM = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)
CHROMEDRIVER = shutil.which("chromedriver")
SECRET = "cors-browser-test-secret-32-bytes"
ROUTE = [[-9.1420, 38.7158], [-9.1360, 38.7180], [-9.1300, 38.7200]]

PAGE = b"""<!doctype html><html><head><meta charset="utf-8"><title>shop</title></head>
<body><p>A shop's page on its own origin.</p></body></html>"""

# Runs in the page: one fetch, reporting what the page can see of the answer.
FETCH = """
const [url, method, token, body, done] = arguments;
const headers = {};
if (token) headers["Authorization"] = "Bearer " + token;
if (body) headers["Content-Type"] = "application/json";
fetch(url, {method, headers, body: body ? JSON.stringify(body) : undefined})
  .then(async r => done({ok: true, status: r.status, location: r.headers.get("Location"),
                         body: await r.text()}))
  .catch(e => done({ok: false, error: String(e)}));
"""


def mint(secret: str, scopes, ttl_s=3600) -> str:
    return mint_token({"sub": "shop", "exp": int(time.time()) + ttl_s, "scope": scopes, "trips": ["*"]}, secret)


class PageHandler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(PAGE)))
        self.end_headers()
        self.wfile.write(PAGE)

    def log_message(self, *args):
        pass


@unittest.skipUnless(HAVE_SELENIUM and CHROMIUM and CHROMEDRIVER, "needs selenium, chromium and chromedriver")
@unittest.skipUnless(trackhub_binary(), "needs TRACKHUB_BIN (the release binary)")
class CORSBrowserTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.page_server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), PageHandler)
        threading.Thread(target=cls.page_server.serve_forever, daemon=True).start()
        cls.page_origin = f"http://127.0.0.1:{cls.page_server.server_address[1]}"
        opts = webdriver.ChromeOptions()
        opts.binary_location = CHROMIUM
        for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                    "--no-first-run", "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"):
            opts.add_argument(arg)
        try:
            cls.driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=opts)
        except WebDriverException as e:
            cls.page_server.shutdown()
            raise unittest.SkipTest(f"cannot start headless chromium: {e.msg}")
        cls.driver.set_script_timeout(20)
        cls.driver.get(cls.page_origin + "/shop.html")
        cls.token = mint(SECRET, ["admin"])

    @classmethod
    def tearDownClass(cls):
        cls.driver.quit()
        cls.page_server.shutdown()

    def call(self, hub, method, path, token=None, body=None):
        return self.driver.execute_async_script(FETCH, hub.http_url + path, method, token, body)

    def test_an_allowed_origin_passes_the_preflight_and_reads_the_answers(self):
        hub = HubProcess("--jwt-secret", SECRET, "--allow-origin", self.page_origin).start()
        try:
            created = self.call(hub, "POST", "/v1/trips", self.token, {"id": "C1", "route": ROUTE})
            self.assertTrue(created["ok"], created)
            self.assertEqual(created["status"], 201, created)
            self.assertEqual(json.loads(created["body"])["trip"], "C1")
            self.assertEqual(created["location"], "/v1/trips/C1")  # exposed to the page
            listed = self.call(hub, "GET", "/v1/trips", self.token)
            self.assertEqual((listed["ok"], listed["status"]), (True, 200), listed)
            self.assertEqual([t["trip"] for t in json.loads(listed["body"])["trips"]], ["C1"])
            # An error is readable too, even one the hub gives before reading a body.
            refused = self.call(hub, "POST", "/v1/trips", "not-a-token", {"route": ROUTE})
            self.assertEqual((refused["ok"], refused["status"]), (True, 401), refused)
            self.assertEqual(json.loads(refused["body"])["error"]["code"], "unauthorized")
            gone = self.call(hub, "DELETE", "/v1/trips/C1", self.token)
            self.assertEqual((gone["ok"], gone["status"]), (True, 200), gone)
        finally:
            hub.stop()

    def test_an_origin_not_allowed_is_refused_by_the_browser(self):
        hub = HubProcess("--jwt-secret", SECRET).start()
        try:
            created = self.call(hub, "POST", "/v1/trips", self.token, {"id": "C2", "route": ROUTE})
            self.assertFalse(created["ok"], created)
            self.assertIn("TypeError", created["error"])
            listed = self.call(hub, "GET", "/v1/trips", self.token)
            self.assertFalse(listed["ok"], listed)
            # The preflight was refused, so the POST never ran.
            status, _, _ = hub.http("GET", "/v1/trips/C2", headers={"Authorization": f"Bearer {self.token}"})
            self.assertEqual(status, 404)
            # What the browser got: a 403 preflight without Access-Control-Allow-Origin.
            import http.client
            conn = http.client.HTTPConnection(hub.host, hub.port, timeout=10)
            conn.request("OPTIONS", "/v1/trips", headers={"Origin": self.page_origin, "Access-Control-Request-Method": "POST"})
            resp = conn.getresponse()
            resp.read()
            conn.close()
            self.assertEqual(resp.status, 403)
            self.assertIsNone(resp.getheader("Access-Control-Allow-Origin"))
        finally:
            hub.stop()


if __name__ == "__main__":
    unittest.main()
