"""The courier's signal (PROTOCOL 18: last fix and battery, stale, low battery) against the
release binary.

    swift build -c release
    cd tests-py && TRACKHUB_BIN=$PWD/../.build/release python3 -m unittest test_courier_signal -v

Every hub runs with a short `--stale-after` (1 s), so a trip is stale after
`max(3 x its usual interval, 1 s)` of silence (10 s while `holding`). The tests read the hub's
own arrival times (`last_fix_t` after each ack) and compute the contract's threshold from
them: a `signal_lost` must not come before it (`t - last_fix_t >= threshold`, exactly) and
must come within a margin after it (the hub looks twice a second; the machine may be busy).

* a fast (1 s) and a slow (4 s) courier go stale after their own thresholds, once;
  `stale` in the snapshot, in GET /v1/trips/{id} and on the trip's single-rider item in
  /v1/fleet/clusters;
* `signal_back {gap_ms}` reaches a segments and a frames subscriber before any segment or
  frame of the fix that ended the silence;
* never stale while pending, arrived or ended; no `signal_back` for a trip that ended
  while stale; a courier at a door (holding) is not stale before 10 x --stale-after;
* battery from the `fix` op (a bad one is `bad_request` naming `battery`), OsmAnd's
  `batt`, Traccar Client's JSON `level` and OwnTracks's `batt`; `battery_low` once, again
  only after a fix above 20 %; a share token sees `battery` null;
* the events are stored, numbered, replayed with since_event as first sent, and delivered
  as webhooks (`trip.signal_lost`, `trip.signal_back`, `trip.battery_low`);
* a restart keeps last_fix_t and battery, judges a silent trip from its stored last_fix_t,
  and never sends signal_lost twice for one silence;
* three hubs of a cluster send the same signal events with the same numbers, and each
  sends signal_back before the fix's segment.

Couriers are paced with asyncio.sleep (that is the courier's rhythm under test, not a
wait for the hub); every wait for the hub is a message, an answer or the hub's own clock
(`pong.t`) polled with a deadline.
"""

import asyncio
import json
import os
import sys
import tempfile
import time
import unittest


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hubproc  # noqa: E402
from hubproc import Courier, HubProcess, now_ms, offset  # noqa: E402
from trip_driving import TrackedClients, redis_server_path, start_cluster  # noqa: E402
from webhook_receiver import Receiver  # noqa: E402

STALE_AFTER_MS = 1000
STALE_AFTER = "1s"
# Cadence off (PROTOCOL 18: `--cadence-idle 0`) wherever a test computes the stale threshold
# from the courier's own rhythm: with cadence on, twice the interval asked of the courier is
# one more floor (TestStaleWithCadence checks that one).
NO_CADENCE = ("--cadence-idle", "0")
# How late after the contract's threshold a signal_lost may come: the hub looks twice a
# second (in quarter-second buckets); a loaded machine adds its own delay. A deadline, not
# a speed being measured.
LATE_MARGIN_MS = 3000
DEADLINE_S = 30.0
POLL_S = 0.05

# A straight route about 868 m due east along latitude 38.70.
LAT0, LON0 = 38.70, -9.15
ROUTE = [[LON0, LAT0], [-9.14, LAT0]]
SIGNAL_EVENTS = ("signal_lost", "signal_back", "battery_low")


def setUpModule():
    hubproc.require_binary()


def east(metres):
    return offset(LAT0, LON0, east_m=metres)


def usual_interval_ms(arrivals):
    """PROTOCOL 18: the median gap between the arrivals of the last 10 stored fixes (the mean
    of the two middle gaps for an even count; 10 s while fewer than 2)."""
    last = arrivals[-10:]
    if len(last) < 2:
        return 10_000
    gaps = sorted(b - a for a, b in zip(last, last[1:]))
    m = len(gaps) // 2
    return gaps[m] if len(gaps) % 2 else (gaps[m - 1] + gaps[m]) // 2


def threshold_ms(arrivals, holding=False):
    floor = STALE_AFTER_MS * (10 if holding else 1)
    return max(3 * usual_interval_ms(arrivals), floor)


def events_of(client, trip, name=None, since=0):
    return [m for _, m in client.log[since:] if m.get("type") == "event" and m.get("trip") == trip
            and (name is None or m.get("name") == name)]


class SignalHelpers(TrackedClients):
    """Clients (TrackedClients), couriers and waits on `self.hub` (set by the test) for the cases below."""

    wait_deadline_s = DEADLINE_S

    async def viewer(self, trip, mode="frames", hub=None, since_event=0):
        c = await self.client(hub)
        await c.send(op="subscribe", trip=trip, mode=mode, since_event=since_event, id="sub")
        snap = await c.wait_type("snapshot", re="sub")
        return c, snap

    def trip(self, trip, hub=None):
        status, doc, raw = (hub or self.hub).http("GET", f"/v1/trips/{trip}")
        self.assertEqual(status, 200, raw)
        return doc

    async def hub_time(self, client):
        """The hub's clock, from a pong."""
        tag = f"clock-{time.monotonic_ns()}"
        await client.send(op="ping", id=tag)
        return (await client.wait_type("pong", re=tag))["t"]

    async def until_hub_time(self, client, t, deadline_s=DEADLINE_S):
        """Waits until the hub's own clock has reached `t` (polled with pings)."""
        end = time.monotonic() + deadline_s
        while await self.hub_time(client) < t:
            if time.monotonic() > end:
                self.fail(f"the hub's clock did not reach {t} within {deadline_s}s")
            await asyncio.sleep(POLL_S)

    async def fix(self, courier_client, courier, lat, lon, hub=None, applied=True, **extra):
        """Sends one fix, waits for its ack, and returns the trip's last_fix_t after it."""
        msg = courier.fix(lat, lon, **extra)
        tag = f"fix-{courier.trip}-{courier.seq}"
        await courier_client.send(**msg, id=tag)
        ack = await courier_client.wait_for(lambda m: m.get("re") == tag, what=f"the ack of {tag}")
        self.assertEqual(ack.get("type"), "ack", ack)
        if applied is not None:
            self.assertEqual(ack["applied"], applied, ack)
        return self.trip(courier.trip, hub)["last_fix_t"]

    async def drive(self, courier_client, courier, count, every_s, start_m=0.0, step_m=20.0, battery=None, hub=None):
        """`count` fixes along the route, one every `every_s` seconds; returns their arrival
        times as the hub noted them (last_fix_t after each ack)."""
        arrivals = []
        for i in range(count):
            if i:
                await asyncio.sleep(every_s)  # the courier's own rhythm
            lat, lon = east(start_m + step_m * i)
            extra = {} if battery is None else {"battery": battery}
            arrivals.append(await self.fix(courier_client, courier, lat, lon, hub=hub, **extra))
        return arrivals

    async def wait_event(self, client, trip, name, timeout=DEADLINE_S):
        return await client.wait_for(lambda m: m.get("type") == "event" and m.get("trip") == trip and m.get("name") == name,
                                     timeout, what=f"{name} of {trip}")

    def assert_on_time(self, lost, arrivals, holding=False):
        """signal_lost came once the contract's threshold had passed, and within the margin."""
        threshold = threshold_ms(arrivals, holding)
        silence = lost["t"] - arrivals[-1]
        self.assertEqual(lost["last_fix_t"], arrivals[-1], lost)
        self.assertGreaterEqual(silence, threshold, f"signal_lost after {silence} ms of silence; threshold {threshold} ms")
        self.assertLessEqual(silence, threshold + LATE_MARGIN_MS, f"signal_lost after {silence} ms; threshold {threshold} ms")

    def assert_before(self, messages, event, what):
        """`event` is among `messages` (a scan up to and including the first segment or
        frame of a fix), before the last one."""
        self.assertTrue(any(m is event for m in messages[:-1]), f"{what}: {messages}")


class SignalCase(SignalHelpers, hubproc.AsyncTestCase):
    """One hub per class, with `--stale-after 1s` (and the class's `hub_args`)."""

    hub_args = ()

    @classmethod
    def setUpClass(cls):
        cls.hub = HubProcess("--stale-after", STALE_AFTER, *NO_CADENCE, "--log-level", "warn", *cls.hub_args).start()

    @classmethod
    def tearDownClass(cls):
        cls.hub.stop()


class TestStale(SignalCase):
    async def test_fast_and_slow_couriers_go_stale_after_their_own_threshold(self):
        self.hub.create_trip(id="fast", route=ROUTE)
        self.hub.create_trip(id="slow", route=ROUTE)
        watch_fast, _ = await self.viewer("fast")
        watch_slow, _ = await self.viewer("slow")
        fast_c, slow_c = await self.client(), await self.client()
        fast, slow = Courier("fast"), Courier("slow")

        async def run(client, courier, every_s, count):
            return await self.drive(client, courier, count, every_s, battery=64)

        fast_arrivals, slow_arrivals = await asyncio.gather(run(fast_c, fast, 1.0, 5), run(slow_c, slow, 4.0, 4))
        lost_fast = await self.wait_event(watch_fast, "fast", "signal_lost")
        self.assert_on_time(lost_fast, fast_arrivals)
        self.assertEqual(lost_fast["battery"], 64)
        lost_slow = await self.wait_event(watch_slow, "slow", "signal_lost")
        self.assert_on_time(lost_slow, slow_arrivals)
        # The slow courier's own rhythm made it wait longer than the fast one's.
        self.assertGreater(threshold_ms(slow_arrivals), threshold_ms(fast_arrivals))

        for trip in ("fast", "slow"):
            doc = self.trip(trip)
            self.assertEqual((doc["stale"], doc["battery"], doc["status"]), (True, 64, "moving"), doc)
        snap = (await self.viewer("fast"))[1]
        self.assertEqual((snap["stale"], snap["last_fix_t"], snap["battery"]), (True, fast_arrivals[-1], 64))
        # The fleet marks the stale rider.
        lat, lon = east(80)
        bbox = ",".join(str(x) for x in (lon - 0.01, lat - 0.01, lon + 0.01, lat + 0.01))

        def fleet():
            status, body, raw = self.hub.http("GET", f"/v1/fleet/clusters?zoom=20&bbox={bbox}")
            items = {i["id"]: i for i in (body or {}).get("items", [])}
            ok = status == 200 and items.get("fast", {}).get("stale") is True
            return ok, body
        body = await self.eventually(fleet, "the fast rider's clusters item with stale: true")
        self.assertEqual(body and [i["stale"] for i in body["items"] if i["id"] == "fast"], [True])

        # One silence, one signal_lost: the hub's clock well past the threshold again.
        await self.until_hub_time(watch_fast, lost_fast["t"] + 2 * threshold_ms(fast_arrivals))
        self.assertEqual(len(events_of(watch_fast, "fast", "signal_lost")), 1)

    async def test_signal_back_comes_before_the_fixs_segment_and_frames(self):
        self.hub.create_trip(id="back", route=ROUTE)
        segments, _ = await self.viewer("back", mode="segments")
        frames, _ = await self.viewer("back", mode="frames")
        courier_c = await self.client()
        courier = Courier("back")
        arrivals = await self.drive(courier_c, courier, 4, 1.0)
        lost = await self.wait_event(segments, "back", "signal_lost")
        await self.wait_event(frames, "back", "signal_lost")
        self.assert_on_time(lost, arrivals)
        seg_mark, frame_mark = segments.mark(), frames.mark()
        seen_seq = max(m["seq"] for _, m in segments.log if m.get("type") == "segment")

        lat, lon = east(100)
        back_at = await self.fix(courier_c, courier, lat, lon)
        back = await self.wait_event(segments, "back", "signal_back")
        upto_segment = await segments.scan(seg_mark, lambda m: m.get("type") == "segment" and m["seq"] > seen_seq,
                                           what="the fix's segment")
        self.assert_before(upto_segment, back, "signal_back before the fix's segment")
        self.assertEqual(back["gap_ms"], back_at - arrivals[-1], back)
        self.assertEqual(back["n"], lost["n"] + 1)
        # Frames: the first frame since the silence comes after signal_back.
        back_f = await self.wait_event(frames, "back", "signal_back")
        upto_frame = await frames.scan(frame_mark, lambda m: m.get("type") == "frame", what="a frame of the fix")
        self.assert_before(upto_frame, back_f, "signal_back before the fix's first frame")
        self.assertFalse(self.trip("back")["stale"])

    async def test_never_stale_while_pending_arrived_or_ended(self):
        self.hub.create_trip(id="pend", route=ROUTE)
        short = [[LON0, LAT0], [offset(LAT0, LON0, east_m=100)[1], LAT0]]
        self.hub.create_trip(id="arr", route=short, config={"wait_at_waypoints": False})
        self.hub.create_trip(id="end", route=ROUTE)
        self.hub.create_trip(id="end-stale", route=ROUTE)
        self.hub.create_trip(id="witness", route=ROUTE)
        watch = {}
        for trip in ("pend", "arr", "end", "end-stale", "witness"):
            watch[trip], _ = await self.viewer(trip)
        c = await self.client()

        # end-stale: stale, then ended, then a fix: no signal_back.
        es = Courier("end-stale")
        await self.drive(c, es, 3, 0.5)
        await self.wait_event(watch["end-stale"], "end-stale", "signal_lost")
        self.assertEqual(self.hub.http("DELETE", "/v1/trips/end-stale")[0], 200)
        await self.wait_event(watch["end-stale"], "end-stale", "ended")
        lat, lon = east(200)
        await self.fix(c, es, lat, lon, applied=False)
        self.assertFalse(self.trip("end-stale")["stale"])

        # arr: to the destination at once (duration_ms 0): arrived.
        ar = Courier("arr")
        lat, lon = east(0)
        arr_arrivals = [await self.fix(c, ar, lat, lon)]
        lat, lon = east(95)
        arr_arrivals.append(await self.fix(c, ar, lat, lon, duration_ms=0))
        await self.wait_event(watch["arr"], "arr", "arrived")
        # end: moving, then ended.
        end_arrivals = await self.drive(c, Courier("end"), 2, 0.2)
        self.assertEqual(self.hub.http("DELETE", "/v1/trips/end")[0], 200)
        await self.wait_event(watch["end"], "end", "ended")
        # A witness that does go stale, and the hub's clock past their thresholds too.
        arrivals = await self.drive(c, Courier("witness"), 3, 0.2)
        lost = await self.wait_event(watch["witness"], "witness", "signal_lost")
        self.assert_on_time(lost, arrivals)
        past = max(a[-1] + threshold_ms(a) for a in (arr_arrivals, end_arrivals)) + LATE_MARGIN_MS
        await self.until_hub_time(c, past)

        for trip in ("pend", "arr", "end"):
            with self.subTest(trip=trip):
                doc = self.trip(trip)
                self.assertFalse(doc["stale"], doc)
                names = [e["name"] for e in events_of(watch[trip], trip)]
                self.assertNotIn("signal_lost", names)
                self.assertNotIn("signal_back", names)
        self.assertIsNone(self.trip("pend")["last_fix_t"])
        self.assertEqual([e["name"] for e in events_of(watch["end-stale"], "end-stale") if e["name"].startswith("signal")],
                         ["signal_lost"])
        # A trip that does not exist: stale null.
        _, unknown = await self.viewer("no-such-trip")
        self.assertEqual((unknown["status"], unknown["stale"], unknown["last_fix_t"], unknown["battery"]),
                         ("unknown", None, None, None))

    async def test_a_courier_waiting_at_a_door_is_not_stale_before_ten_times_stale_after(self):
        door = east(200)
        self.hub.create_trip(id="door", route=ROUTE, waypoints=[{"lat": door[0], "lon": door[1]}])
        watch, _ = await self.viewer("door")
        c = await self.client()
        courier = Courier("door", speed_mps=40)
        arrivals = await self.drive(c, courier, 5, 1.0, step_m=40)  # the last within 50 m of the door
        await self.wait_event(watch, "door", "waypoint_reached")
        self.assertEqual(self.trip("door")["status"], "holding")
        # Past the threshold of a moving trip (3 x its usual 1 s), short of 10 x --stale-after.
        await self.until_hub_time(c, arrivals[-1] + threshold_ms(arrivals) + LATE_MARGIN_MS)
        self.assertLess(await self.hub_time(c), arrivals[-1] + 10 * STALE_AFTER_MS)
        self.assertEqual(events_of(watch, "door", "signal_lost"), [])
        self.assertFalse(self.trip("door")["stale"])
        # Holding longer than 10 x --stale-after without a word: now it is stale.
        lost = await self.wait_event(watch, "door", "signal_lost")
        self.assert_on_time(lost, arrivals, holding=True)
        self.assertTrue(self.trip("door")["stale"])


class TestStaleWithCadence(SignalHelpers, hubproc.AsyncTestCase):
    """PROTOCOL 18: twice the longest interval the hub asked of the courier in the last 2
    minutes is a floor of the stale rule, so a courier that follows an idle cadence is not
    judged silent by its earlier, faster rhythm."""

    IDLE_MS = 5000

    @classmethod
    def setUpClass(cls):
        cls.hub = HubProcess("--stale-after", STALE_AFTER, "--cadence-idle", f"{cls.IDLE_MS}ms", "--log-level", "warn").start()

    @classmethod
    def tearDownClass(cls):
        cls.hub.stop()

    async def test_a_courier_told_an_idle_cadence_is_not_stale_before_twice_it(self):
        self.hub.create_trip(id="idle", route=ROUTE)  # nobody subscribes: unwatched, so idle
        c = await self.client()
        courier = Courier("idle")
        arrivals = await self.drive(c, courier, 10, 1.0)  # a 1 s rhythm: on its own, stale after 3 s
        # Sent after the first ack (the acks were waited for past it: look in the log).
        told = next(m for _, m in c.log if isinstance(m, dict) and m.get("type") == "cadence" and m.get("trip") == "idle")
        self.assertEqual((told["interval_ms"], told["watched"]), (self.IDLE_MS, False), told)
        own_threshold = threshold_ms(arrivals)
        self.assertLess(own_threshold + LATE_MARGIN_MS, 2 * self.IDLE_MS)
        # Past the courier's own threshold (with the margin), short of twice the idle cadence.
        await self.until_hub_time(c, arrivals[-1] + own_threshold + LATE_MARGIN_MS)
        self.assertLess(await self.hub_time(c), arrivals[-1] + 2 * self.IDLE_MS)
        self.assertFalse(self.trip("idle")["stale"])
        # Silent for longer than twice what it was asked: now it is stale.
        doc = await self.eventually(lambda: ((d := self.trip("idle"))["stale"] is True, d), "the trip stale after twice the idle cadence")
        self.assertGreaterEqual(await self.hub_time(c), arrivals[-1] + 2 * self.IDLE_MS)
        self.assertEqual(doc["last_fix_t"], arrivals[-1])


class TestBattery(SignalCase):
    async def test_battery_from_the_fix_op_and_bad_values(self):
        self.hub.create_trip(id="batt", route=ROUTE)
        c = await self.client()
        courier = Courier("batt")
        self.assertIsNone(self.trip("batt")["battery"])
        lat, lon = east(0)
        await self.fix(c, courier, lat, lon, battery=55.4)
        self.assertEqual(self.trip("batt")["battery"], 55)
        lat, lon = east(20)
        await self.fix(c, courier, lat, lon)  # no battery: the last one stands
        self.assertEqual(self.trip("batt")["battery"], 55)
        for bad in (150, -1, "50", True):
            with self.subTest(battery=bad):
                lat, lon = east(40)
                msg = courier.fix(lat, lon, battery=bad)
                await c.send(**msg, id=f"bad-{bad}")
                err = await c.wait_for(lambda m, bad=bad: m.get("re") == f"bad-{bad}")
                self.assertEqual((err["type"], err["code"]), ("error", "bad_request"), err)
                self.assertIn("battery", err["message"])
        status, body, raw = self.hub.http("POST", "/v1/trips/batt/fixes", {"fixes": [
            {"lat": lat, "lon": lon, "ts": now_ms() - 1000, "battery": 101}]})
        self.assertEqual(status, 400, raw)
        self.assertIn("fixes[0].battery", body["error"]["message"])
        status, body, raw = self.hub.http("POST", "/v1/trips/batt/fixes", {"fixes": [
            {"lat": lat, "lon": lon, "ts": now_ms() - 1000, "battery": 9}]})
        self.assertEqual(status, 200, raw)
        self.assertEqual(self.trip("batt")["battery"], 9)

    async def test_battery_low_once_then_again_only_after_more_than_twenty(self):
        self.hub.create_trip(id="low", route=ROUTE)
        watch, _ = await self.viewer("low")
        c = await self.client()
        courier = Courier("low")
        for i, battery in enumerate([40, 15, 10, 20, 21, 14, 30, 12.4]):
            lat, lon = east(20 * i)
            await self.fix(c, courier, lat, lon, battery=battery)
        last = await watch.wait_for(lambda m: m.get("name") == "battery_low" and m.get("battery") == 12,
                                    what="the third battery_low")
        lows = events_of(watch, "low", "battery_low")
        self.assertEqual([e["battery"] for e in lows], [15, 14, 12])
        self.assertIs(lows[-1], last)
        self.assertEqual(self.trip("low")["battery"], 12)

    async def test_battery_from_osmand_traccar_and_owntracks(self):
        self.hub.create_trip(id="phone", route=ROUTE)
        device = "phone-signal-0123456789"
        status, _, raw = self.hub.http("PUT", f"/v1/devices/{device}", {"trip": "phone"})
        self.assertEqual(status, 200, raw)
        t0 = now_ms() - 60_000
        lat, lon = east(0)
        status, _, raw = self.hub.http("GET", f"/v1/osmand?id={device}&lat={lat}&lon={lon}&timestamp={t0}&batt=33.6")
        self.assertEqual(status, 200, raw)
        self.assertEqual(self.trip("phone")["battery"], 34)
        lat, lon = east(20)
        body = json.dumps({"device_id": device, "location": {
            "timestamp": t0 + 2000, "coords": {"latitude": lat, "longitude": lon}, "battery": {"level": 0.79}}}).encode()
        status, _, raw = self.hub.http("POST", "/v1/osmand", raw=body, headers={"Content-Type": "application/json"})
        self.assertEqual(status, 200, raw)
        self.assertEqual(self.trip("phone")["battery"], 79)
        lat, lon = east(40)
        status, _, raw = self.hub.http("POST", f"/v1/owntracks/{device}", {
            "_type": "location", "lat": lat, "lon": lon, "tst": (t0 + 4000) // 1000 + 1, "batt": 46})
        self.assertEqual(status, 200, raw)
        doc = self.trip("phone")
        self.assertEqual(doc["battery"], 46)
        self.assertIsNotNone(doc["last_fix_t"])


class TestShareSeesNoBattery(SignalCase):
    SECRET = "courier-signal-e2e-secret-of-32-bytes"
    hub_args = ("--jwt-secret", SECRET)

    async def test_a_share_token_sees_battery_null(self):
        exp = now_ms() // 1000 + 3600
        admin = hubproc.mint_token({"sub": "t", "scope": ["admin", "courier", "viewer"], "trips": ["*"], "exp": exp}, self.SECRET)
        auth = {"Authorization": f"Bearer {admin}"}
        status, _, raw = self.hub.http("POST", "/v1/trips", {"id": "shared", "route": ROUTE}, headers=auth)
        self.assertEqual(status, 201, raw)
        lat, lon = east(0)
        status, _, raw = self.hub.http("POST", "/v1/trips/shared/fixes", {"fixes": [
            {"lat": lat, "lon": lon, "ts": now_ms() - 1000, "seq": 1, "battery": 12}]}, headers=auth)
        self.assertEqual(status, 200, raw)
        status, link, raw = self.hub.http("POST", "/v1/trips/shared/share", {}, headers=auth)
        self.assertEqual(status, 201, raw)
        share = {"Authorization": f"Bearer {link['token']}"}
        status, doc, raw = self.hub.http("GET", "/v1/trips/shared", headers=share)
        self.assertEqual(status, 200, raw)
        self.assertIsNone(doc["battery"])
        self.assertIsNotNone(doc["last_fix_t"])
        status, doc, raw = self.hub.http("GET", "/v1/trips/shared", headers=auth)
        self.assertEqual(doc["battery"], 12)
        customer = await self.client(url=f"{self.hub.ws_url}?token={link['token']}")
        await customer.send(op="subscribe", trip="shared", since_event=0, id="s")
        snap = await customer.wait_type("snapshot", re="s")
        self.assertIsNone(snap["battery"])
        low = await self.wait_event(customer, "shared", "battery_low")
        self.assertIsNone(low["battery"])  # a customer's replay has no battery
        # Nor its live events; a viewer's have it.
        viewer = await self.client(url=f"{self.hub.ws_url}?token={admin}")
        await viewer.send(op="subscribe", trip="shared", id="v")
        await viewer.wait_type("snapshot", re="v")
        for seq, battery in ((2, 50), (3, 10)):
            status, _, raw = self.hub.http("POST", "/v1/trips/shared/fixes", {"fixes": [
                {"lat": lat, "lon": lon, "ts": now_ms() - 1000 + seq, "seq": seq, "battery": battery}]}, headers=auth)
            self.assertEqual(status, 200, raw)
        live = await self.wait_event(customer, "shared", "battery_low")
        self.assertIsNone(live["battery"])
        self.assertEqual((await self.wait_event(viewer, "shared", "battery_low"))["battery"], 10)


class TestEventsAreStoredReplayedAndDelivered(SignalCase):
    WEBHOOK_SECRET = "courier-signal-webhook-secret"

    @classmethod
    def setUpClass(cls):
        cls.receiver = Receiver()
        cls.hub_args = ("--webhook", cls.receiver.url, "--webhook-secret", cls.WEBHOOK_SECRET,
                        "--webhook-events", "signal_lost,signal_back,battery_low")
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        cls.receiver.close()

    async def test_signal_events_are_replayed_as_sent_and_delivered_as_webhooks(self):
        self.hub.create_trip(id="hooked", route=ROUTE)
        watch, _ = await self.viewer("hooked")
        c = await self.client()
        courier = Courier("hooked")
        await self.drive(c, courier, 3, 0.5, battery=13)
        await self.wait_event(watch, "hooked", "signal_lost")
        lat, lon = east(100)
        await self.fix(c, courier, lat, lon)
        await self.wait_event(watch, "hooked", "signal_back")
        live = {m["n"]: text for text, m in watch.log if m.get("type") == "event" and m.get("name") in SIGNAL_EVENTS}
        self.assertEqual(sorted(json.loads(t)["name"] for t in live.values()), ["battery_low", "signal_back", "signal_lost"])

        # Replayed with since_event, byte for byte as first sent.
        late, snap = await self.viewer("hooked", since_event=0)
        self.assertTrue(snap["recovered"])
        last_n = max(live)
        await late.wait_for(lambda m: m.get("type") == "event" and m.get("n") == last_n, what="the replay")
        replayed = {m["n"]: text for text, m in late.log if m.get("type") == "event" and m.get("name") in SIGNAL_EVENTS}
        self.assertEqual(replayed, live)

        # Delivered as webhooks: trip.<name>, data the event without its type, webhook-id trip:n.
        self.receiver.wait_until(lambda r: len([q for q in r.accepted() if (q["id"] or "").startswith("hooked:")]) >= 3,
                                 timeout=DEADLINE_S, what="three signal webhooks")
        hooks = {q["id"]: q["doc"] for q in self.receiver.accepted() if (q["id"] or "").startswith("hooked:")}
        for n, text in live.items():
            sent = json.loads(text)
            doc = hooks[f"hooked:{n}"]
            self.assertEqual(doc["type"], "trip." + sent["name"])
            sent.pop("type")
            self.assertEqual(doc["data"], sent)


class TestRestart(SignalHelpers, hubproc.AsyncTestCase):
    async def test_a_restart_keeps_the_signal_and_never_repeats_signal_lost(self):
        tmp = tempfile.TemporaryDirectory(prefix="trackhub-signal-")
        self.addCleanup(tmp.cleanup)
        data = os.path.join(tmp.name, "data")
        self.hub = HubProcess("--stale-after", STALE_AFTER, *NO_CADENCE, "--data", data).start()
        self.addCleanup(lambda: self.hub.stop())
        self.hub.create_trip(id="gone", route=ROUTE)
        self.hub.create_trip(id="quiet", route=ROUTE)
        watch, _ = await self.viewer("gone")
        c = await self.client()
        await self.drive(c, Courier("gone"), 3, 0.3, battery=30)
        await self.wait_event(watch, "gone", "signal_lost")
        # A courier sending every 2 s: stale 6 s after its last fix, after the restart.
        quiet = await self.drive(c, Courier("quiet"), 3, 2.0, battery=77)
        before = {t: self.trip(t) for t in ("gone", "quiet")}
        self.assertFalse(before["quiet"]["stale"])
        await self.close_clients()
        self.assertEqual(self.hub.stop(), 0)

        # Started again with the setting from the environment (TRACKHUB_STALE_AFTER).
        self.hub = HubProcess("--data", data, *NO_CADENCE, env={"TRACKHUB_STALE_AFTER": STALE_AFTER}).start()
        after = {t: self.trip(t) for t in ("gone", "quiet")}
        for trip in ("gone", "quiet"):
            self.assertEqual((after[trip]["last_fix_t"], after[trip]["battery"]),
                             (before[trip]["last_fix_t"], before[trip]["battery"]), trip)
        self.assertTrue(after["gone"]["stale"])
        gone, _ = await self.viewer("gone")
        restarted_at = await self.hub_time(gone)
        quiet_watch, _ = await self.viewer("quiet")
        # Judged from its stored last_fix_t: the silence began before the restart.
        lost = await self.wait_event(quiet_watch, "quiet", "signal_lost")
        self.assertEqual((lost["last_fix_t"], lost["battery"]), (quiet[-1], 77))
        self.assertGreaterEqual(lost["t"], min(restarted_at, quiet[-1] + threshold_ms(quiet)))
        self.assertGreaterEqual(lost["t"] - quiet[-1], threshold_ms(quiet))
        self.assertLessEqual(lost["t"], max(restarted_at, quiet[-1] + threshold_ms(quiet)) + LATE_MARGIN_MS)
        await self.until_hub_time(gone, lost["t"] + 2000)
        self.assertEqual(len(events_of(gone, "gone", "signal_lost")), 1, events_of(gone, "gone"))
        self.assertEqual(len(events_of(quiet_watch, "quiet", "signal_lost")), 1)


class TestFlag(unittest.TestCase):
    def test_stale_after_is_a_duration_of_at_least_a_second(self):
        for value in ("0s", "500ms", "soon"):
            with self.subTest(value=value):
                out = hubproc.run_cli(["serve", "--stale-after", value, "--listen", "127.0.0.1:0"])
                self.assertEqual(out.returncode, 2, out.stderr)
                self.assertIn("--stale-after", out.stderr)
                self.assertEqual(len(out.stderr.strip().splitlines()), 1, out.stderr)
        help_text = hubproc.run_cli(["serve", "--help"]).stdout
        self.assertIn("--stale-after DURATION", help_text)
        self.assertIn("stale-after: 15s", hubproc.run_cli(["config", "default"]).stdout)


@unittest.skipIf(redis_server_path() is None, "redis-server is not installed: the cluster test needs it")
class TestCluster(SignalHelpers, hubproc.AsyncTestCase):
    """Three hubs sharing one Redis log (test_cluster's Redis process), with --stale-after 1s."""

    def setUp(self):
        import test_cluster  # its health probe
        self.tc = test_cluster
        self.redis, self.hubs = start_cluster(self, "--stale-after", STALE_AFTER, *NO_CADENCE, "--log-level", "warn",
                                              prefix="trackhub-signal-cluster-")
        self.hub = self.hubs["A"]

    async def test_every_hub_sends_the_same_signal_events_and_signal_back_before_the_segment(self):
        for name, hub in self.hubs.items():
            await self.eventually(lambda hub=hub: (self.tc.health(hub)[0] == 200, self.tc.health(hub)), f"hub {name} healthy")
        trip = "cl-signal"
        self.hubs["A"].create_trip(id=trip, route=ROUTE)
        viewers = {}
        for name, hub in self.hubs.items():
            viewers[name], _ = await self.viewer(trip, mode="segments", hub=hub)
        c = await self.client(self.hubs["A"])
        courier = Courier(trip)
        arrivals = await self.drive(c, courier, 4, 1.0, battery=14)
        lost = await self.wait_event(viewers["A"], trip, "signal_lost")
        self.assert_on_time(lost, arrivals)
        for name, v in viewers.items():
            if name != "A":
                self.assertEqual(await self.wait_event(v, trip, "signal_lost"), lost, name)
        # Every hub's fleet marks the stale rider (the owner's published positions carry it).
        lat, lon = east(60)
        query = "/v1/fleet/clusters?zoom=20&bbox=" + ",".join(str(x) for x in (lon - 0.01, lat - 0.01, lon + 0.01, lat + 0.01))
        for name, hub in self.hubs.items():
            def fleet(hub=hub):
                status, body, raw = hub.http("GET", query)
                items = [i for i in (body or {}).get("items", []) if i["id"] == trip]
                return status == 200 and [i.get("stale") for i in items] == [True], raw[:300]
            await self.eventually(fleet, f"{trip} stale in {name}'s fleet")
        marks = {name: v.mark() for name, v in viewers.items()}
        seqs = {name: max(m["seq"] for _, m in v.log if m.get("type") == "segment") for name, v in viewers.items()}
        lat, lon = east(100)
        await self.fix(c, courier, lat, lon)
        for name, v in viewers.items():
            with self.subTest(hub=name):
                back = await self.wait_event(v, trip, "signal_back")
                upto = await v.scan(marks[name], lambda m, s=seqs[name]: m.get("type") == "segment" and m["seq"] > s,
                                    what=f"the fix's segment on {name}")
                self.assert_before(upto, back, f"signal_back before the fix's segment on {name}")
        # The same events, numbers and bytes on every hub.
        signal = {name: [t for t, m in v.log if m.get("type") == "event" and m.get("name") in SIGNAL_EVENTS]
                  for name, v in viewers.items()}
        self.assertEqual([json.loads(t)["name"] for t in signal["A"]], ["battery_low", "signal_lost", "signal_back"])
        self.assertEqual(signal["B"], signal["A"])
        self.assertEqual(signal["C"], signal["A"])
        for name, hub in self.hubs.items():
            doc = self.trip(trip, hub)
            self.assertEqual((doc["stale"], doc["battery"], doc["last_fix_t"]), (False, 14, self.trip(trip)["last_fix_t"]), name)


if __name__ == "__main__":
    unittest.main()
