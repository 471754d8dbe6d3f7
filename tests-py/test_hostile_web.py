"""The web client against hostile URLs and files (issue 14, parts 6 and 7; PROTOCOL 10).

Against the release hub started as a user would (hubproc.HubProcess):
  - every page and file of the web client carries a Content-Security-Policy that allows
    scripts and styles only from the hub, and `Referrer-Policy: no-referrer`;
  - a symlink in --web-root that leads out of it is 404, a file (or symlink) inside is 200;
  - `serve` creates the data directory 0750 and the database files 0640, even with umask 0;
  - in headless Chromium, markup in the URL (`?tiles_attribution=`, the trip id in the
    path) or in a trip's data (the rider's name) is shown as text: no element is made of
    it and no script runs; and the CSP is enforced (an inline script is refused).

No sleeps: browser conditions are awaited with WebDriverWait deadlines.
"""

import http.client
import json
import os
import shutil
import stat
import tempfile
import time
import unittest
import urllib.parse

import hubproc

try:
    from selenium import webdriver
    from selenium.common.exceptions import TimeoutException, WebDriverException
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.support.ui import WebDriverWait
    HAVE_SELENIUM = True
except ImportError:  # pragma: no cover
    HAVE_SELENIUM = False

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
WEB_CLIENT = os.path.join(REPO, "web-client")
ROUTE = [[-9.1500, 38.7100], [-9.1440, 38.7130], [-9.1390, 38.7170]]
PWN = '<img src=x onerror="window.__pwned=1">'


def setUpModule():
    hubproc.require_binary()


def get(hub, path, headers=None):
    """(status, {lower-case header: value}, body) of one GET."""
    conn = http.client.HTTPConnection(hub.host, hub.port, timeout=10)
    try:
        conn.request("GET", path, headers=headers or {})
        resp = conn.getresponse()
        body = resp.read()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, body
    finally:
        conn.close()


def directives(policy):
    """{directive: [sources]} of a CSP header value."""
    out = {}
    for part in policy.split(";"):
        words = part.split()
        if words:
            out[words[0].lower()] = words[1:]
    return out


class SecurityHeadersTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.hub = hubproc.HubProcess().start()

    @classmethod
    def tearDownClass(cls):
        cls.hub.stop()

    def test_every_web_client_answer_has_csp_and_referrer_policy(self):
        host = f"{self.hub.host}:{self.hub.port}"
        for path, status in [("/", 200), ("/fleet", 200), ("/trips/X", 200), ("/index.html", 200),
                             ("/app.js", 200), ("/styles.css", 200), ("/vendor/leaflet/leaflet.js", 200),
                             ("/no-such-file.js", 404)]:
            with self.subTest(path=path):
                got, headers, _ = get(self.hub, path)
                self.assertEqual(got, status)
                self.assertEqual(headers.get("referrer-policy"), "no-referrer")
                self.assertIn("content-security-policy", headers)
                csp = directives(headers["content-security-policy"])
                self.assertEqual(csp.get("script-src"), ["'self'"])
                self.assertEqual(csp.get("style-src"), ["'self'"])
                self.assertEqual(csp.get("default-src"), ["'none'"])
                self.assertEqual(sorted(csp.get("img-src", [])), sorted(["'self'", "https:", "data:"]))
                self.assertEqual(sorted(csp.get("connect-src", [])), sorted(["'self'", f"ws://{host}", f"wss://{host}"]))
                self.assertEqual(csp.get("frame-ancestors"), ["'none'"])

    def test_a_refused_method_has_the_headers_too(self):
        conn = http.client.HTTPConnection(self.hub.host, self.hub.port, timeout=10)
        try:
            conn.request("DELETE", "/fleet")
            resp = conn.getresponse()
            resp.read()
        finally:
            conn.close()
        self.assertEqual(resp.status, 405)
        self.assertEqual(resp.getheader("referrer-policy"), "no-referrer")
        self.assertEqual(directives(resp.getheader("content-security-policy") or "").get("script-src"), ["'self'"])

    def test_a_hostile_host_header_stays_out_of_the_policy(self):
        # lws may refuse such a Host itself; if the page is served, the policy has no
        # source built from it.
        status, headers, _ = get(self.hub, "/", headers={"Host": "evil;script-src *"})
        if status == 200:
            csp = directives(headers["content-security-policy"])
            self.assertEqual(csp.get("script-src"), ["'self'"])
            self.assertEqual(csp.get("connect-src"), ["'self'"])

    def test_pages_have_no_inline_script_or_style(self):
        _, _, body = get(self.hub, "/")
        page = body.decode()
        self.assertNotIn("<style", page)
        self.assertNotIn("style=", page)
        for tag in page.split("<script")[1:]:
            self.assertIn("src=", tag.split(">")[0], "an inline <script> the CSP would refuse")


class SymlinkWebRootTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="trackhub-webroot-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        root = os.path.join(self.tmp, "web")
        shutil.copytree(WEB_CLIENT, root)
        outside = os.path.join(self.tmp, "outside")
        os.mkdir(outside)
        with open(os.path.join(outside, "secret.txt"), "w") as f:
            f.write("secret\n")
        os.symlink(os.path.join(outside, "secret.txt"), os.path.join(root, "secret.txt"))
        os.symlink(outside, os.path.join(root, "out"))
        os.symlink("/etc/passwd", os.path.join(root, "passwd.txt"))
        os.symlink("app.js", os.path.join(root, "alias.js"))  # stays inside: served
        # The web root itself through a symlink: its real path is the root checked against.
        link_root = os.path.join(self.tmp, "web-link")
        os.symlink(root, link_root)
        self.hub = hubproc.HubProcess("--web-root", link_root).start()
        self.addCleanup(self.hub.stop)

    def test_symlinks_out_of_the_root_are_404(self):
        for path in ("/secret.txt", "/out/secret.txt", "/passwd.txt"):
            with self.subTest(path=path):
                status, headers, body = get(self.hub, path)
                self.assertEqual(status, 404, body[:200])
                self.assertNotIn(b"secret", body)
                self.assertNotIn(b"root:", body)
                self.assertEqual(headers.get("referrer-policy"), "no-referrer")

    def test_files_inside_the_root_are_served(self):
        with open(os.path.join(WEB_CLIENT, "app.js"), "rb") as f:
            app = f.read()
        for path in ("/app.js", "/alias.js"):
            with self.subTest(path=path):
                status, headers, body = get(self.hub, path)
                self.assertEqual(status, 200)
                self.assertEqual(body, app)
                self.assertTrue(headers["content-type"].startswith("text/javascript"))
        status, _, body = get(self.hub, "/fleet")
        self.assertEqual(status, 200)
        self.assertIn(b"/app.js", body)


class DataDirectoryModeTest(unittest.TestCase):
    def test_data_dir_0750_and_database_files_0640_whatever_the_umask(self):
        old = os.umask(0)  # the child inherits it: modes must not depend on it
        try:
            hub = hubproc.HubProcess().start()
        finally:
            os.umask(old)
        self.addCleanup(hub.stop)
        # The store is open once the hub listens; a trip makes sure the WAL has been written.
        hub.create_trip(id="mode-check", route=ROUTE)
        data = os.path.join(hub._tmp.name, "data")
        self.assertEqual(stat.S_IMODE(os.stat(data).st_mode), 0o750)
        files = sorted(os.listdir(data))
        self.assertIn("trackhub.db", files)
        self.assertIn("trackhub.db-wal", files)
        for name in files:
            if name.startswith("trackhub.db"):
                with self.subTest(file=name):
                    self.assertEqual(stat.S_IMODE(os.stat(os.path.join(data, name)).st_mode), 0o640)


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        p = shutil.which(name)
        if p:
            return p
    return None


BROWSER_SKIP = None
if not HAVE_SELENIUM:
    BROWSER_SKIP = "selenium is not installed (pip install selenium==4.25.0)"
elif not find_chromium() or not shutil.which("chromedriver"):
    BROWSER_SKIP = "chromium and chromium-driver are not installed"

# Runs before every page's own scripts (not subject to the page's CSP): records CSP
# violations, so a test sees what the policy refused.
RECORD_VIOLATIONS = """
window.__csp = [];
document.addEventListener('securitypolicyviolation', (e) => {
  window.__csp.push({directive: e.effectiveDirective, blocked: e.blockedURI, sample: e.sample});
});
"""


@unittest.skipIf(BROWSER_SKIP is not None, BROWSER_SKIP or "")
class HostileURLBrowserTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        opts = webdriver.ChromeOptions()
        opts.binary_location = find_chromium()
        for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                    "--window-size=1280,900", "--no-first-run", "--no-default-browser-check",
                    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"):
            opts.add_argument(arg)
        try:
            cls.driver = webdriver.Chrome(service=Service(executable_path=shutil.which("chromedriver")), options=opts)
        except WebDriverException as e:
            raise unittest.SkipTest(f"cannot start headless chromium: {e.msg}")
        cls.driver.set_page_load_timeout(30)
        cls.driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORD_VIOLATIONS})
        cls.hub = hubproc.HubProcess().start()

    @classmethod
    def tearDownClass(cls):
        cls.driver.quit()
        cls.hub.stop()

    def open(self, path):
        self.driver.get(self.hub.http_url + path)

    def js(self, script, *args):
        return self.driver.execute_script(script, *args)

    def wait(self, cond, timeout=15, message=""):
        try:
            return WebDriverWait(self.driver, timeout, poll_frequency=0.05).until(lambda d: cond())
        except TimeoutException:
            raise AssertionError(f"timed out after {timeout}s waiting for: {message}; CSP: {self.violations()}")

    def violations(self):
        return self.js("return window.__csp || null;")

    def assert_nothing_ran(self):
        self.assertIsNone(self.js("return window.__pwned === undefined ? null : String(window.__pwned);"))
        self.assertEqual(self.js("return document.querySelectorAll('img[src=\"x\"], script:not([src])').length;"), 0,
                         "markup from the URL or a trip became elements")

    def test_tiles_attribution_from_the_url_is_text(self):
        query = urllib.parse.urlencode({"tiles": "https://tiles.invalid/{z}/{x}/{y}.png", "tiles_attribution": PWN})
        self.open(f"/fleet?{query}")
        attribution = ".leaflet-control-attribution"
        self.wait(lambda: PWN in (self.js(f"const e = document.querySelector('{attribution}'); return e ? e.textContent : '';") or ""),
                  message="the attribution shown as text")
        self.assertEqual(self.js(f"return document.querySelector('{attribution}').querySelectorAll('img').length;"), 0)
        self.assert_nothing_ran()
        self.assertEqual(self.violations(), [], "the fleet page needs nothing the CSP refuses")

    def test_trip_id_in_the_path_is_text(self):
        for trip in (PWN, "<script>window.__pwned=2</script>"):
            with self.subTest(trip=trip):
                # `/` in the id would not be a trip page: the script's end tag uses a `\\`.
                trip = trip.replace("</", "<\\")
                self.open("/trips/" + urllib.parse.quote(trip, safe=""))
                self.wait(lambda: trip in (self.js("const e = document.querySelector('.card-title'); return e ? e.textContent : '';") or ""),
                          message="the trip id shown as text")
                self.assertIn(trip, self.driver.title)
                self.assert_nothing_ran()
                self.assertEqual(self.violations(), [])

    def test_rider_name_from_the_trip_is_text(self):
        trip = f"hostile-{int(time.time() * 1000) % 10_000_000}"
        self.hub.create_trip(id=trip, route=ROUTE, rider={"id": "r1", "name": PWN})
        self.open(f"/trips/{trip}")
        self.wait(lambda: self.js("const e = document.querySelector('.card-title'); return e ? e.textContent : '';") == PWN,
                  message="the rider's name shown as text")
        self.assert_nothing_ran()
        self.open("/")
        self.wait(lambda: self.js("return [...document.querySelectorAll('[data-testid=trip-row]')].some(r => r.textContent.includes(arguments[0]));", PWN),
                  message="the rider's name in the trips list as text")
        self.assert_nothing_ran()
        self.assertEqual(self.violations(), [])

    def test_the_policy_is_enforced(self):
        self.open("/fleet")
        self.wait(lambda: self.js("return !!document.querySelector('.leaflet-container');"), message="the fleet map")
        # An inline script and a style attribute put in by markup are refused.
        self.js("""const s = document.createElement('script'); s.textContent = 'window.__inline = 1'; document.head.append(s);
                   const d = document.createElement('div'); d.id = 'styled'; d.setAttribute('style', 'width: 123px'); document.body.append(d);""")
        self.wait(lambda: len(self.violations() or []) >= 2, message="two CSP violations")
        self.assertIsNone(self.js("return window.__inline === undefined ? null : window.__inline;"))
        self.assertNotEqual(self.js("return document.getElementById('styled').getBoundingClientRect().width;"), 123)
        self.assertEqual(sorted(v["directive"] for v in self.violations()), ["script-src-elem", "style-src-attr"])


if __name__ == "__main__":
    unittest.main()
