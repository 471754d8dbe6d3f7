// The customer's page of a share link (/t/{token}, PROTOCOL 13): a map with the route done
// solid and the rest dotted, the rider's marker animated from `segment` messages, the
// destination, and a card like an order on its way ("Arriving in 9 min", "Alex is bringing
// your order", a progress bar, "Your order is here"). A page of its own: no navigation, no
// trail, no other trip. It reuses the dashboard's modules for the protocol client, the
// segment animation, the geometry and the map (with its offline vector basemap). When the
// rider's phone goes silent (PROTOCOL 18) the card says "Last update N min ago" and the
// marker is greyed, so a customer does not wait on a position that no longer moves.
// A link for one stop (PROTOCOL 17) says "2 stops before yours · about 25 min" while the
// courier is hidden, draws the marker and the route to the stop once shown, and "Your order
// is here" once its stop is reached (stop-follow.js keeps what the page knows of it).

import { connect, pageHubUrl } from "./trackhub-client.js";
import { SegmentAnimator } from "./segment-animator.js";
import { RouteSplit, doneAlongNow } from "./route-split.js";
import { ARROW_SVG, FLAG_SVG, keepInView } from "./map-icons.js";
import { bounds as lineBounds } from "./geo.js";
import { h, makeMap, reducedMotion, cardPadding } from "./util.js";
import { CourierSignal, SIGNAL_TICK_MS } from "./courier-signal.js";
import { StopFollow, hiddenHeadline, stopsBeforeText } from "./stop-follow.js";

/** How long the marker rests at the door once the order is there, before it is taken off. */
const AT_DOOR_MS = 4000;
/** How much a stop link's camera widens the courier-and-door box on each side (a fraction
 *  of its span): 1/3 puts the box inside the middle 60 % of the view. */
const STOP_VIEW_PAD = 0.34;

/** The token of /t/{token}, the one trip its payload names and its `stop` claim (null for a
 *  link to the whole trip). Unverified: for the page only; the hub checks the token on every
 *  request, and the snapshot says which stop the link really follows. */
export function parseShareToken(pathname) {
  const m = pathname.match(/^\/t\/([^/]+)\/?$/);
  if (!m) return null;
  let token;
  try { token = decodeURIComponent(m[1]); } catch (_) { return null; }
  const parts = token.split(".");
  if (parts.length !== 3) return null;
  try {
    const b64 = parts[1].replace(/-/g, "+").replace(/_/g, "/");
    const json = JSON.parse(new TextDecoder().decode(Uint8Array.from(atob(b64 + "=".repeat((4 - b64.length % 4) % 4)), (c) => c.charCodeAt(0))));
    const trip = Array.isArray(json.trips) && json.trips.length === 1 ? json.trips[0] : null;
    const stop = typeof json.stop === "string" ? json.stop : null;
    return typeof trip === "string" ? { token, trip, stop } : null;
  } catch (_) {
    return null;
  }
}

/** The card's headline for a status and an ETA in seconds (minutes rounded up). */
export function headline(status, etaS) {
  switch (status) {
    case "arrived": return "Your order is here";
    case "ended": return "This delivery has ended";
    case "unknown": return "Your order has not set off yet";
    case "pending": return "Your order will soon be on its way";
    default: break;
  }
  if (etaS === null || etaS === undefined) return "Your order is on its way";
  if (etaS <= 0) return "Arriving now";
  const min = Math.ceil(etaS / 60);
  if (min >= 60) {
    const hrs = Math.floor(min / 60);
    const rest = min % 60;
    return `Arriving in ${hrs} h${rest ? ` ${rest} min` : ""}`;
  }
  return `Arriving in ${min} min`;
}

function fmt(n) {
  return (Math.round(n * 1e6) / 1e6).toFixed(6);
}

function mount(main) {
  const link = parseShareToken(location.pathname);

  // ---- DOM ------------------------------------------------------------------
  const mapEl = h("div", { class: "map", id: "share-map", role: "region", "aria-label": "Map of your order's way" });
  const statusEl = h("span", { class: "chip status-unknown", "data-testid": "trip-status", "data-status": "unknown", "data-stale": "false" }, "Loading…");
  const etaEl = h("h1", { class: "share-eta", "data-testid": "eta", "aria-live": "polite" }, "—");
  const riderEl = h("p", { class: "share-rider", "data-testid": "rider-name" }, "");
  // While the rider's phone is silent: "Last update 4 min ago" (the hub's judgement, 18).
  const lastUpdateEl = h("p", { class: "share-last-update", "data-testid": "last-update", hidden: true });
  const barFill = h("span", { class: "bar-fill" });
  barFill.style.width = "0%";
  const bar = h("div", { class: "bar bar-lg", role: "progressbar", "aria-label": "Delivery progress", "aria-valuemin": 0, "aria-valuemax": 100 }, barFill);
  const followBtn = h("button", { type: "button", class: "recenter", "data-testid": "follow", "aria-pressed": "true" }, "Follow the rider");
  const messageEl = h("p", { class: "share-message", "data-testid": "share-message", role: "alert", hidden: true });
  // A link for one stop, while the courier is shown: "Next stop is yours", "1 stop before yours".
  const stopsEl = h("p", { class: "share-stops", "data-testid": "stops-before", hidden: true });
  // While it is hidden: why the map shows no rider.
  const hiddenNote = h("p", { class: "share-hidden-note", "data-testid": "hidden-note", hidden: true });
  const card = h("section", { class: "card share-card", "data-testid": "share-card", "data-status": "unknown", "data-stale": "false", "aria-label": "Your order" },
    etaEl, stopsEl, riderEl, hiddenNote, lastUpdateEl, bar, h("div", { class: "share-foot" }, statusEl, followBtn), messageEl);
  main.replaceChildren(h("div", { class: "share-layout" }, mapEl, card));

  function endWith(text, reason) {
    card.dataset.ended = reason;
    messageEl.hidden = false;
    messageEl.textContent = text;
  }

  if (!link) {
    document.title = "Link not valid";
    etaEl.textContent = "This link is not valid";
    endWith("Check that the whole link was copied, or ask the shop for a new one.", "invalid");
    return;
  }
  if (typeof L === "undefined") {
    endWith("The map could not load; please reload the page.", "no-map");
    return;
  }
  const { token, trip } = link;
  const follow = new StopFollow(link.stop);

  // ---- map ------------------------------------------------------------------
  const map = makeMap(mapEl);
  map.setView([20, 0], 2);
  const split = new RouteSplit(map);
  let marker = null;
  let markerEl = null;
  let destMarker = null;

  // ---- state ----------------------------------------------------------------
  const st = {
    status: "unknown", eta: null, progress: null, name: null,
    route: null, cum: null, routeLen: 0, destAlong: null, doneM: null,
    // A stop link's route is a stretch that ends at its stop: where it starts along the trip.
    routeStart: 0,
    destination: null, fitted: false, over: false,
  };
  const signal = new CourierSignal();
  let hub = null;
  const anim = new SegmentAnimator({ now: () => (hub ? hub.hubNow() : Date.now()) });

  /** The headline: section 13's, or while a stop link's courier is hidden, the stops and ETA. */
  function cardHeadline() {
    const hidden = follow.active && !follow.visible && !follow.reached && st.status !== "arrived" && st.status !== "ended";
    return hidden ? hiddenHeadline(follow.stopsBefore, follow.etaS) : headline(st.status, st.eta);
  }

  /** A stop link's hooks and its "N stops before yours" line; nothing for a whole-trip link. */
  function renderStop() {
    if (!follow.active) {
      delete card.dataset.stopsBefore;
      delete card.dataset.visible;
      stopsEl.hidden = true;
      hiddenNote.hidden = true;
      return;
    }
    const shown = follow.visible && !follow.reached;
    if (follow.stopsBefore === null) delete card.dataset.stopsBefore;
    else card.dataset.stopsBefore = String(follow.stopsBefore);
    card.dataset.visible = shown ? "true" : "false";
    stopsEl.hidden = !shown || follow.stopsBefore === null || st.status === "arrived";
    if (!stopsEl.hidden) stopsEl.textContent = stopsBeforeText(follow.stopsBefore);
    hiddenNote.hidden = shown || st.over || st.status === "arrived" || st.status === "ended";
    if (!hiddenNote.hidden) hiddenNote.textContent = `The map will show ${st.name || "your rider"} as your stop gets close.`;
  }

  function renderCard() {
    card.dataset.status = st.status;
    statusEl.dataset.status = st.status;
    statusEl.className = `chip status-${st.status}`;
    statusEl.textContent = { moving: "On the way", holding: "On the way", off_route: "On the way", pending: "Preparing",
      arrived: "Delivered", ended: "Ended", unknown: "Not started" }[st.status] || st.status;
    const words = cardHeadline();
    etaEl.textContent = words;
    etaEl.dataset.etaS = st.eta === null || st.eta === undefined ? "" : String(st.eta);
    const name = st.name || "Your rider";
    riderEl.textContent = st.status === "arrived" ? `Delivered by ${name}` : st.status === "ended" || st.status === "unknown" ? "" : `${name} is bringing your order`;
    document.title = `${words} · Your order`;
    renderStop();
    renderSignal();
  }

  /** The stale look and "Last update …"; run on every change and every tick. */
  function renderSignal() {
    const stale = !st.over && signal.isStale(st.status);
    const flag = stale ? "true" : "false";
    card.dataset.stale = flag;
    statusEl.dataset.stale = flag;
    statusEl.classList.toggle("stale", stale);
    if (markerEl) markerEl.classList.toggle("stale", stale);
    lastUpdateEl.hidden = !stale;
    if (stale) {
      const words = signal.lastUpdateText(hub ? hub.hubNow() : Date.now());
      if (lastUpdateEl.textContent !== words) lastUpdateEl.textContent = words;
    }
  }

  function renderProgress(progress) {
    if (typeof progress !== "number") {
      bar.removeAttribute("aria-valuenow");
      barFill.style.width = "0%";
      return;
    }
    const pct = st.status === "arrived" ? 100 : Math.round(Math.max(0, Math.min(1, progress)) * 100);
    bar.setAttribute("aria-valuenow", String(pct));
    bar.setAttribute("aria-valuetext", `${pct}%`);
    barFill.style.width = `${pct}%`;
  }

  function setRoute(route) {
    split.setRoute(route);
    st.route = split.route;
    st.cum = split.cum;
    st.routeLen = split.length;
  }

  const drawSplit = (doneAlong) => split.draw(doneAlong - st.routeStart);

  /** Where a stop link's route stretch starts along the trip: it ends at the stop, which lies
   *  `destAlong` along; 0 for a whole route. */
  function placeRoute() {
    st.routeStart = follow.active && st.route && st.destAlong !== null ? Math.max(0, st.destAlong - st.routeLen) : 0;
  }

  function setDestination(dest) {
    if (destMarker) { destMarker.remove(); destMarker = null; }
    st.destination = dest || null;
    if (!dest) return;
    const icon = L.divIcon({ className: "dest-icon", html: FLAG_SVG, iconSize: [32, 40], iconAnchor: [16, 39] });
    destMarker = L.marker([dest.lat, dest.lon], { icon, keyboard: false, interactive: false, zIndexOffset: 500 }).addTo(map);
    const el = destMarker.getElement();
    el.setAttribute("data-testid", "destination");
    el.setAttribute("role", "img");
    el.setAttribute("aria-label", "Your address");
  }

  function ensureMarker(lat, lon) {
    if (marker) return;
    const icon = L.divIcon({ className: "rider-icon", html: `<div class="rider-arrow">${ARROW_SVG}</div>`, iconSize: [40, 40], iconAnchor: [20, 20] });
    marker = L.marker([lat, lon], { icon, keyboard: false, interactive: false, zIndexOffset: 1000 }).addTo(map);
    markerEl = marker.getElement();
    markerEl.setAttribute("data-testid", "rider-marker");
    markerEl.setAttribute("role", "img");
    markerEl.setAttribute("aria-label", st.name ? `${st.name}, your rider` : "Your rider");
    markerEl.classList.toggle("stale", signal.isStale(st.status));
  }

  function removeMarker() {
    anim.reset(null);
    if (marker) { marker.remove(); marker = null; markerEl = null; }
  }

  function fitAll() {
    const pts = [];
    if (st.route) pts.push(...st.route);
    if (st.destination) pts.push([st.destination.lon, st.destination.lat]);
    const p = anim.current();
    if (p) pts.push([p.lon, p.lat]);
    const b = lineBounds(pts);
    if (!b) return false;
    if (pts.length === 1 || (b[0][0] === b[1][0] && b[0][1] === b[1][1])) map.setView([b[0][1], b[0][0]], 16, { animate: false });
    else {
      // A stop link's view is the courier and the door: with a third of the span around them
      // both sit in the middle 60 % that "follow the rider" keeps the marker in, so following
      // does not pan the door out of view at once.
      const bounds = L.latLngBounds([[b[0][1], b[0][0]], [b[1][1], b[1][0]]]).pad(follow.active ? STOP_VIEW_PAD : 0);
      map.fitBounds(bounds, { ...cardPadding(card), animate: false, maxZoom: 17 });
    }
    return true;
  }

  // ---- protocol -------------------------------------------------------------
  function onSnapshot(s) {
    st.status = s.status;
    st.eta = s.eta_s;
    st.progress = s.progress;
    st.name = (s.rider && typeof s.rider.name === "string" && s.rider.name) || null;
    st.doneM = s.done_m;
    st.destAlong = s.done_m !== null && s.remaining_m !== null && s.done_m !== undefined ? s.done_m + s.remaining_m : null;
    signal.fromSnapshot(s);
    follow.fromSnapshot(s);
    // A stop link past its stop: the order is there, whatever the trip does next.
    if (follow.reached) { st.status = "arrived"; st.eta = 0; st.progress = 1; }
    setRoute(s.route);
    placeRoute();
    setDestination(s.destination);
    if (s.position) {
      anim.reset(s.position, s.bearing);
      ensureMarker(s.position.lat, s.position.lon);
    } else {
      removeMarker();
    }
    if (!st.fitted) st.fitted = fitAll();
    drawSplit(st.status === "arrived" ? st.routeStart + st.routeLen : st.doneM ?? 0);
    renderCard();
    renderProgress(st.progress);
    draw(true);
  }

  function onSegment(seg) {
    if (st.over) return;
    // A stop link gets segments only while the courier is shown (its `stop` message said so
    // first); the route stretch comes with the link's view.
    if (follow.active && !follow.visible && !follow.reached) { follow.visible = true; loadStopView(); }
    else if (follow.active && follow.visible && !st.route) retryStopView();
    anim.push(seg);
    const first = seg.path && seg.path[0];
    if (first) ensureMarker(first[1], first[0]);
    st.status = seg.status || st.status;
    st.eta = seg.eta_s;
    st.progress = seg.progress_to;
    st.doneM = seg.done_m;
    if (seg.done_m !== null && seg.done_m !== undefined && seg.remaining_m !== null && seg.remaining_m !== undefined) {
      st.destAlong = seg.done_m + seg.remaining_m;
    }
    if (!st.fitted) st.fitted = fitAll();
    renderCard();
  }

  /** A link for one stop's `stop` message: stops before it, the ETA, the courier shown or not. */
  function onStop(msg) {
    if (st.over) return;
    const changed = follow.fromStopMessage(msg);
    if (typeof msg.eta_s === "number" || msg.eta_s === null) st.eta = msg.eta_s;
    if (changed && follow.visible) {
      // Shown: the route stretch to the stop comes with the link's view; the camera fits it.
      st.fitted = false;
      loadStopView();
    } else if (changed && !follow.reached) {
      // Hidden again (near another stop): no marker, no route.
      removeMarker();
      setRoute(null);
      placeRoute();
      st.fitted = false;
      st.fitted = fitAll();
    }
    renderCard();
  }

  /** Shown without a route yet (the view was taken a moment too early): ask again, at most
   *  every few seconds and a few times while the courier stays shown. */
  const VIEW_RETRY_MS = 3000;
  const VIEW_RETRIES = 5;
  let viewRetries = 0;
  let lastViewAt = 0;
  function retryStopView() {
    if (viewRetries >= VIEW_RETRIES || performance.now() - lastViewAt < VIEW_RETRY_MS) return;
    viewRetries += 1;
    loadStopView({ retry: true });
  }

  let viewRequest = 0;
  /** The link's `GET /v1/trips/{id}` (what its snapshot would be): the route stretch, and the
   *  courier's position if no segment placed it yet. A later change of visibility wins. */
  async function loadStopView({ retry = false } = {}) {
    const mine = ++viewRequest;
    lastViewAt = performance.now();
    if (!retry) viewRetries = 0;
    let body = null;
    try {
      const res = await fetch(`/v1/trips/${encodeURIComponent(trip)}`, { headers: { Accept: "application/json", Authorization: `Bearer ${token}` }, cache: "no-store" });
      if (res.ok) body = await res.json();
    } catch (_) {
      body = null;
    }
    if (!body || mine !== viewRequest || st.over || !follow.visible || follow.reached) return;
    // Its numbers are the latest unless a segment came since the courier was shown (a courier
    // at rest sends none).
    if (!anim.segment && typeof body.done_m === "number" && typeof body.remaining_m === "number") {
      st.doneM = body.done_m;
      st.destAlong = body.done_m + body.remaining_m;
      st.progress = body.progress;
      st.eta = body.eta_s;
    }
    if (body.route) {
      setRoute(body.route);
      placeRoute();
    }
    if (body.destination && !st.destination) setDestination(body.destination);
    if (!marker && body.position) {
      anim.reset(body.position, body.bearing);
      ensureMarker(body.position.lat, body.position.lon);
    }
    // Fit once the courier is placed too (else the first segment fits).
    if (!st.fitted && anim.current()) st.fitted = fitAll();
    renderCard();
    renderProgress(st.progress);
    draw(true);
  }

  function onEvent(ev, { replayed }) {
    if (replayed) return;
    if (signal.onEvent(ev)) { renderSignal(); return; }
    if (follow.fromEvent(ev)) { st.status = "arrived"; st.eta = 0; st.progress = 1; }
    else if (follow.active && ev.name === "arrived") { /* another stop's end is not this link's */ }
    else if (ev.name === "arrived") { st.status = "arrived"; st.eta = 0; if (st.route) st.progress = 1; }
    else if (ev.name === "ended") st.status = "ended";
    else if (ev.name === "trip_created" && st.status === "unknown") st.status = "pending";
    renderCard();
  }

  function onUnsubscribed(msg) {
    st.over = true;
    if (msg.reason === "arrived") {
      // The last segment ends at the door: let the marker rest there, then take it off.
      if (follow.active) follow.markReached();
      st.status = "arrived";
      renderCard();
      renderProgress(1);
      const seg = anim.segment;
      const endsAt = seg && typeof seg.t0 === "number" ? seg.t0 + (Number(seg.duration_ms) || 0) : 0;
      const wait = Math.max(0, endsAt - hub.hubNow()) + AT_DOOR_MS;
      setTimeout(removeMarker, wait);
      hub.close();
    } else if (msg.reason === "ended") {
      st.status = "ended";
      renderCard();
      removeMarker();
      hub.close();
    } else {
      stopWith(msg.reason === "revoked" ? "revoked" : msg.reason === "stop_removed" ? "stop_removed" : "other");
    }
  }

  /** The link stopped working (revoked, expired, refused): no position any more, a message. */
  function stopWith(why) {
    st.over = true;
    removeMarker();
    if (hub) hub.close();
    etaEl.textContent = why === "expired" ? "This link has expired" : why === "revoked" ? "This link was withdrawn"
      : why === "stop_removed" ? "Your stop is no longer on this delivery" : "This link no longer works";
    riderEl.textContent = "";
    stopsEl.hidden = true;
    hiddenNote.hidden = true;
    statusEl.textContent = "Link ended";
    document.title = "Link ended · Your order";
    endWith(why === "expired"
      ? "Tracking links last a limited time. If your order has not come yet, ask the shop for a new link."
      : why === "stop_removed"
        ? "The delivery was planned again without your stop. Ask the shop when your order will come."
        : "The shop stopped sharing this delivery. Ask the shop if you need a new link.", why);
  }

  /** Why the hub refused the token, from its `unauthorized` message. */
  function refusal(message) {
    const text = String(message || "");
    if (/revoked/.test(text)) return "revoked";
    if (/expired/.test(text)) return "expired";
    return "other";
  }

  async function start() {
    let res;
    try {
      res = await fetch(`/v1/trips/${encodeURIComponent(trip)}`, { headers: { Accept: "application/json", Authorization: `Bearer ${token}` }, cache: "no-store" });
    } catch (_) {
      res = null;
    }
    if (res && (res.status === 401 || res.status === 403)) {
      let body = null;
      try { body = await res.json(); } catch (_) { /* not JSON */ }
      stopWith(refusal(body && body.error && body.error.message));
      return;
    }
    hub = connect(pageHubUrl(), {
      token,
      onState: (state, info) => {
        mapEl.dataset.connection = state;
        // 1008 "token expired": the link's time is up (a reconnect would be refused).
        if (state === "closed" && info && info.code === 1008 && !st.over) stopWith("expired");
      },
    });
    hub.subscribe(trip, {
      mode: "segments", onSnapshot, onSegment, onEvent, onStop, onUnsubscribed,
      onError: (e) => { if (e.code === "unauthorized" || e.code === "forbidden") stopWith(refusal(e.message)); },
    });
  }

  // ---- animation ------------------------------------------------------------
  const currentDone = (p) => doneAlongNow(anim.segment, st.destAlong, st.status, st.doneM, p.fraction);

  let lastPan = 0;
  let lastDraw = 0;
  function draw(force = false) {
    const now = performance.now();
    lastDraw = now;
    // Reduce Motion: the marker steps to each target instead of sliding there.
    const p = reducedMotion() ? anim.positionAt(Number.MAX_SAFE_INTEGER) : anim.current();
    if (!p || !marker) return;
    marker.setLatLng([p.lat, p.lon]);
    markerEl.setAttribute("data-lat", fmt(p.lat));
    markerEl.setAttribute("data-lon", fmt(p.lon));
    const arrow = markerEl.firstElementChild;
    if (arrow && p.bearing !== null && p.bearing !== undefined) arrow.style.transform = `rotate(${p.bearing}deg)`;
    const done = currentDone(p);
    if (st.route) drawSplit(done);
    if (st.destAlong && st.status !== "arrived" && st.status !== "off_route") renderProgress(done / st.destAlong);
    else if (typeof st.progress === "number") renderProgress(st.progress);
    if (followBtn.getAttribute("aria-pressed") === "true" && (force || now - lastPan > 400)) {
      if (keepInView(map, p.lat, p.lon, !reducedMotion())) lastPan = now;
    }
  }

  function frame() {
    draw();
    requestAnimationFrame(frame);
  }
  requestAnimationFrame(frame);
  setInterval(() => { if (performance.now() - lastDraw > 100) draw(); }, 100);
  // "Last update N min ago" counts on without any message from the hub.
  setInterval(renderSignal, SIGNAL_TICK_MS);

  // The camera follows the marker until the customer moves the map; the button brings it back.
  const stopFollowing = () => followBtn.setAttribute("aria-pressed", "false");
  map.on("dragstart", stopFollowing);
  mapEl.addEventListener("wheel", stopFollowing, { passive: true });
  mapEl.addEventListener("touchstart", (e) => { if (e.touches && e.touches.length > 1) stopFollowing(); }, { passive: true });
  followBtn.addEventListener("click", () => { followBtn.setAttribute("aria-pressed", "true"); lastPan = 0; draw(true); });

  start();
}

mount(document.getElementById("main"));
