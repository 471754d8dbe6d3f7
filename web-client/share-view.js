// The customer's page of a share link (/t/{token}, PROTOCOL 13): a map with the route done
// solid and the rest dotted, the rider's marker animated from `segment` messages, the
// destination, and a card like an order on its way ("Arriving in 9 min", "Alex is bringing
// your order", a progress bar, "Your order is here"). A page of its own: no navigation, no
// trail, no other trip. It reuses the dashboard's modules for the protocol client, the
// segment animation, the geometry and the map (with its offline vector basemap). When the
// rider's phone goes silent (PROTOCOL 18) the card says "Last update N min ago" and the
// marker is greyed, so a customer does not wait on a position that no longer moves.

import { connect, pageHubUrl } from "./trackhub-client.js";
import { SegmentAnimator } from "./segment-animator.js";
import { RouteSplit, doneAlongNow } from "./route-split.js";
import { ARROW_SVG, FLAG_SVG, keepInView } from "./map-icons.js";
import { bounds as lineBounds } from "./geo.js";
import { h, makeMap, reducedMotion, cardPadding } from "./util.js";
import { CourierSignal, SIGNAL_TICK_MS } from "./courier-signal.js";

/** How long the marker rests at the door once the order is there, before it is taken off. */
const AT_DOOR_MS = 4000;

/** The token of /t/{token}, and the one trip its payload names (unverified: for the page
 *  only; the hub checks the token on every request). */
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
    return typeof trip === "string" ? { token, trip } : null;
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
  const card = h("section", { class: "card share-card", "data-testid": "share-card", "data-status": "unknown", "data-stale": "false", "aria-label": "Your order" },
    etaEl, riderEl, lastUpdateEl, bar, h("div", { class: "share-foot" }, statusEl, followBtn), messageEl);
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
    destination: null, fitted: false, over: false,
  };
  const signal = new CourierSignal();
  let hub = null;
  const anim = new SegmentAnimator({ now: () => (hub ? hub.hubNow() : Date.now()) });

  function renderCard() {
    card.dataset.status = st.status;
    statusEl.dataset.status = st.status;
    statusEl.className = `chip status-${st.status}`;
    statusEl.textContent = { moving: "On the way", holding: "On the way", off_route: "On the way", pending: "Preparing",
      arrived: "Delivered", ended: "Ended", unknown: "Not started" }[st.status] || st.status;
    etaEl.textContent = headline(st.status, st.eta);
    etaEl.dataset.etaS = st.eta === null || st.eta === undefined ? "" : String(st.eta);
    const name = st.name || "Your rider";
    riderEl.textContent = st.status === "arrived" ? `Delivered by ${name}` : st.status === "ended" || st.status === "unknown" ? "" : `${name} is bringing your order`;
    document.title = `${headline(st.status, st.eta)} · Your order`;
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

  const drawSplit = (doneAlong) => split.draw(doneAlong);

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
    else map.fitBounds([[b[0][1], b[0][0]], [b[1][1], b[1][0]]], { ...cardPadding(card), animate: false, maxZoom: 17 });
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
    setRoute(s.route);
    setDestination(s.destination);
    if (s.position) {
      anim.reset(s.position, s.bearing);
      ensureMarker(s.position.lat, s.position.lon);
    } else {
      removeMarker();
    }
    if (!st.fitted) st.fitted = fitAll();
    drawSplit(st.status === "arrived" ? st.routeLen : st.doneM ?? 0);
    renderCard();
    renderProgress(st.progress);
    draw(true);
  }

  function onSegment(seg) {
    if (st.over) return;
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

  function onEvent(ev, { replayed }) {
    if (replayed) return;
    if (signal.onEvent(ev)) { renderSignal(); return; }
    if (ev.name === "arrived") { st.status = "arrived"; st.eta = 0; if (st.route) st.progress = 1; }
    else if (ev.name === "ended") st.status = "ended";
    else if (ev.name === "trip_created" && st.status === "unknown") st.status = "pending";
    renderCard();
  }

  function onUnsubscribed(msg) {
    st.over = true;
    if (msg.reason === "arrived") {
      // The last segment ends at the door: let the marker rest there, then take it off.
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
      stopWith(msg.reason === "revoked" ? "revoked" : "other");
    }
  }

  /** The link stopped working (revoked, expired, refused): no position any more, a message. */
  function stopWith(why) {
    st.over = true;
    removeMarker();
    if (hub) hub.close();
    etaEl.textContent = why === "expired" ? "This link has expired" : why === "revoked" ? "This link was withdrawn" : "This link no longer works";
    riderEl.textContent = "";
    statusEl.textContent = "Link ended";
    document.title = "Link ended · Your order";
    endWith(why === "expired"
      ? "Tracking links last a limited time. If your order has not come yet, ask the shop for a new link."
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
      mode: "segments", onSnapshot, onSegment, onEvent, onUnsubscribed,
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
