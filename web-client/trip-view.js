// One trip (/trips/{id}): the map with the route (done part solid, left part dotted),
// the animated rider marker, waypoints, destination, the trail on demand, and a card
// with ETA, progress and status. Live through a `segments` subscription. A courier gone
// silent (PROTOCOL 18) greys the marker and the status, says "Last update N min ago", and
// the card shows the phone's battery when it is known. The stops (PROTOCOL 17) are listed
// with their names and ETAs, each with a control that makes its customer link.

import { SegmentAnimator } from "./segment-animator.js";
import { RouteSplit, doneAlongNow } from "./route-split.js";
import { ARROW_SVG, FLAG_SVG, keepInView } from "./map-icons.js";
import { bounds as lineBounds } from "./geo.js";
import { CourierSignal, SIGNAL_TICK_MS, BATTERY_LOW_PERCENT, batteryText } from "./courier-signal.js";
import { StopList } from "./stop-list.js";
import {
  h, getJSON, hubClient, connectionIndicator, makeMap, reducedMotion,
  etaText, statusWords, formatDistance, cardPadding,
} from "./util.js";


/** How often the trip view asks the hub for the battery level (segments do not carry it). */
const BATTERY_REFRESH_MS = 30000;
/** How often it asks for the stops' ETAs while some are still ahead (segments carry only the
 *  trip's own). */
const STOP_ETA_REFRESH_MS = 10000;

function fmt(n) {
  return (Math.round(n * 1e6) / 1e6).toFixed(6);
}

export function mountTripView(main, tripId) {
  document.title = `Trip ${tripId} · TrackHub`;
  const setConn = connectionIndicator();

  // ---- DOM ------------------------------------------------------------------
  const mapEl = h("div", { class: "map", id: "trip-map", role: "region", "aria-label": `Map of trip ${tripId}` });
  const title = h("h1", { class: "card-title" }, tripId);
  const subtitle = h("p", { class: "card-sub mono" }, "");
  const statusEl = h("span", { class: "chip status-unknown", "data-testid": "trip-status", "data-status": "unknown", "data-stale": "false", role: "status", "aria-live": "polite" }, "Loading…");
  const etaEl = h("p", { class: "eta", "data-testid": "eta", "aria-live": "polite" }, "—");
  const barFill = h("span", { class: "bar-fill" });
  barFill.style.width = "0%";
  const bar = h("div", { class: "bar bar-lg", role: "progressbar", "aria-label": "Trip progress", "aria-valuemin": 0, "aria-valuemax": 100 }, barFill);
  const pctText = h("span", { class: "pct" }, "");
  const leftText = h("span", { class: "muted" }, "");
  // The courier's signal: "No signal · Last update 4 min ago" while stale, the battery when known.
  const lastUpdateEl = h("span", { class: "last-update", "data-testid": "last-update", hidden: true });
  const batteryEl = h("span", { class: "battery", "data-testid": "battery", hidden: true });
  const signalRow = h("p", { class: "signal-row", hidden: true }, lastUpdateEl, batteryEl);
  // Said once by the status chip's live region when the signal goes: the ticking time is not.
  const staleWords = h("span", { class: "visually-hidden" }, "");
  const stopList = new StopList(tripId);
  const stopsList = stopList.el;
  const followBtn = h("button", { type: "button", class: "toggle", "data-testid": "follow", "aria-pressed": reducedMotion() ? "false" : "true" },
    h("span", { class: "toggle-icon", "aria-hidden": "true" }, "◎"), " Follow rider");
  const trailBtn = h("button", { type: "button", class: "toggle", "data-testid": "trail-toggle", "aria-pressed": "false" },
    h("span", { class: "toggle-icon", "aria-hidden": "true" }, "⋯"), " Show trail");
  const legend = h("p", { class: "legend muted", hidden: true },
    h("span", { class: "legend-dot ok" }), " accepted fix ", h("span", { class: "legend-dot refused" }), " refused fix");
  const banner = h("p", { class: "banner", role: "alert", hidden: true });
  // "Rerouted" for a moment when the trip gets a new route (PROTOCOL 16: the hub's own,
  // reason off_route, or a client's); the map redraws from the snapshot that follows.
  const reroutedNote = h("p", { class: "rerouted-note", id: "rerouted-note", role: "status", hidden: true });
  const REROUTED_SHOWN_MS = 4000;
  let reroutedTimer = null;
  function showRerouted(reason) {
    reroutedNote.textContent = reason === "off_route" ? "Rerouted: a new route from where the rider is." : "Rerouted: the route changed.";
    reroutedNote.dataset.reason = reason || "client";
    reroutedNote.hidden = false;
    if (reroutedTimer) clearTimeout(reroutedTimer);
    reroutedTimer = setTimeout(() => { reroutedNote.hidden = true; reroutedTimer = null; }, REROUTED_SHOWN_MS);
  }

  const card = h("section", { class: "card trip-card", "aria-label": "Trip details" },
    h("div", { class: "card-head" }, h("div", {}, title, subtitle), statusEl),
    etaEl,
    h("div", { class: "progress-row" }, bar, pctText),
    h("div", { class: "progress-sub" }, leftText),
    signalRow,
    banner,
    reroutedNote,
    stopsList,
    h("div", { class: "card-actions" }, followBtn, trailBtn),
    legend);

  main.replaceChildren(h("div", { class: "page page-map" }, mapEl, card));

  // ---- map ------------------------------------------------------------------
  const map = makeMap(mapEl);
  map.setView([20, 0], 2);
  const routeLayer = L.layerGroup().addTo(map);
  const wpLayer = L.layerGroup().addTo(map);
  const trailLayer = L.layerGroup();
  const split = new RouteSplit(routeLayer);

  let riderMarker = null;
  let riderEl = null;
  let destMarker = null;

  // ---- state ----------------------------------------------------------------
  const st = {
    snap: null,
    route: null, cum: null, routeLen: 0,
    destAlong: null,        // the destination's along-route distance (done_m + remaining_m)
    doneM: null,            // along-route distance at the last known target
    status: "unknown",
    progress: null,
    eta: null,
    remaining: null,
    waypoints: [],
    holdingIndex: null,
    rider: null,
    fitted: false,
  };
  const signal = new CourierSignal();
  const hub = hubClient((state) => setConn(state));
  const anim = new SegmentAnimator({ now: () => hub.hubNow() });

  function riderName() {
    return (st.rider && (st.rider.name || st.rider.id)) || `Trip ${tripId}`;
  }

  // ---- card -----------------------------------------------------------------
  function holdingStop() {
    if (st.status !== "holding") return null;
    let idx = st.holdingIndex;
    if (idx === null) {
      const w = st.waypoints.find((x) => !x.visited);
      idx = w ? w.index : null;
    }
    if (idx === null) return null;
    const pos = st.waypoints.findIndex((w) => w.index === idx);
    return pos >= 0 ? pos + 1 : idx + 1;
  }

  function renderCard() {
    statusEl.dataset.status = st.status;
    statusEl.className = `chip status-${st.status}`;
    statusEl.textContent = statusWords(st.status, { holdingStop: holdingStop() });
    statusEl.append(staleWords);
    etaEl.textContent = st.status === "pending" ? "—" : etaText(st.status, st.eta);
    etaEl.dataset.etaS = st.eta === null || st.eta === undefined ? "" : String(st.eta);
    if (typeof st.progress === "number") {
      // An arrived trip is there: 100 %, even while the marker covers its last metres.
      const pct = st.status === "arrived" ? 100 : Math.round(Math.max(0, Math.min(1, st.progress)) * 100);
      bar.setAttribute("aria-valuenow", String(pct));
      bar.setAttribute("aria-valuetext", `${pct}%`);
      barFill.style.width = `${pct}%`;
      pctText.textContent = `${pct}%`;
    } else {
      bar.removeAttribute("aria-valuenow");
      bar.removeAttribute("aria-valuetext");
      barFill.style.width = "0%";
      pctText.textContent = "";
    }
    leftText.textContent = st.remaining !== null && st.remaining !== undefined && st.status !== "arrived"
      ? `${formatDistance(st.remaining)} to go` : "";
    title.textContent = riderName();
    subtitle.textContent = st.rider ? tripId : "";
    if (st.status === "off_route") { banner.hidden = false; banner.textContent = "The rider left the planned route."; }
    else if (st.status === "unknown") { banner.hidden = false; banner.textContent = "This trip does not exist (yet). The page will follow it once it is created."; }
    else if (st.status === "ended") { banner.hidden = false; banner.textContent = "This trip has ended."; }
    else banner.hidden = true;
    renderStops();
    renderSignal();
  }

  /** The stale look, "Last update …" and the battery; run on every change and every tick. */
  function renderSignal() {
    const stale = signal.isStale(st.status);
    const flag = stale ? "true" : "false";
    statusEl.dataset.stale = flag;
    statusEl.classList.toggle("stale", stale);
    const said = stale ? " (no signal)" : "";
    if (staleWords.textContent !== said) staleWords.textContent = said;
    if (riderEl) riderEl.classList.toggle("stale", stale);
    lastUpdateEl.hidden = !stale;
    if (stale) {
      const words = `No signal · ${signal.lastUpdateText(hub.hubNow())}`;
      if (lastUpdateEl.textContent !== words) lastUpdateEl.textContent = words;
      lastUpdateEl.dataset.lastFixT = signal.lastFixT === null ? "" : String(signal.lastFixT);
    }
    const known = signal.battery !== null;
    batteryEl.hidden = !known;
    if (known) {
      batteryEl.textContent = batteryText(signal.battery);
      batteryEl.dataset.battery = String(Math.round(signal.battery));
      batteryEl.classList.toggle("low", signal.battery <= BATTERY_LOW_PERCENT);
    }
    signalRow.hidden = lastUpdateEl.hidden && batteryEl.hidden;
  }

  /** The stops with their names and ETAs, then the destination (the last customer's stop)
   *  when the trip has stops. */
  function renderStops() {
    const here = holdingStop();
    const rows = st.waypoints.map((w, i) => ({
      id: typeof w.id === "string" ? w.id : null,
      index: w.index,
      num: String(i + 1),
      name: (typeof w.name === "string" && w.name) || (typeof w.id === "string" && w.id) || `Stop ${i + 1}`,
      visited: !!w.visited,
      here: st.status === "holding" && here === i + 1,
      etaS: w.visited ? null : w.eta_s ?? null,
      remainingM: w.visited ? null : w.remaining_m ?? null,
    }));
    if (rows.length > 0 && st.snap && st.snap.destination) {
      const over = st.status === "arrived" || st.status === "ended";
      rows.push({ id: "destination", index: null, num: "⚑", name: "Destination", visited: over, here: false,
        etaS: over ? null : st.eta, remainingM: over ? null : st.remaining });
    }
    stopList.render(rows);
  }

  /** A waypoint the courier has been to: no ETA any more. */
  function markVisited(i) {
    const w = st.waypoints[i];
    w.visited = true;
    w.eta_s = null;
    w.remaining_m = null;
    markWaypoint(w, i);
  }

  // ---- map layers -----------------------------------------------------------
  function setWaypoints() {
    wpLayer.clearLayers();
    st.waypoints.forEach((w, i) => {
      const icon = L.divIcon({ className: "wp-icon", html: `<span>${i + 1}</span>`, iconSize: [28, 28], iconAnchor: [14, 14] });
      const m = L.marker([w.lat, w.lon], { icon, keyboard: false, interactive: false, title: `Stop ${i + 1}` }).addTo(wpLayer);
      const el = m.getElement();
      el.setAttribute("data-testid", "waypoint");
      el.setAttribute("data-index", String(w.index));
      el.setAttribute("role", "img");
      w.el = el;
      markWaypoint(w, i);
    });
  }

  function markWaypoint(w, i) {
    if (!w.el) return;
    w.el.setAttribute("data-visited", w.visited ? "true" : "false");
    w.el.classList.toggle("visited", !!w.visited);
    w.el.setAttribute("aria-label", `Stop ${i + 1}${w.visited ? ", visited" : ""}`);
  }

  function setDestination(dest) {
    if (destMarker) { destMarker.remove(); destMarker = null; }
    if (!dest) return;
    const icon = L.divIcon({ className: "dest-icon", html: FLAG_SVG, iconSize: [32, 40], iconAnchor: [16, 39] });
    destMarker = L.marker([dest.lat, dest.lon], { icon, keyboard: false, interactive: false, zIndexOffset: 500 }).addTo(map);
    const el = destMarker.getElement();
    el.setAttribute("data-testid", "destination");
    el.setAttribute("role", "img");
    el.setAttribute("aria-label", "Destination");
  }

  function ensureRider(lat, lon) {
    if (riderMarker) return;
    const icon = L.divIcon({ className: "rider-icon", html: `<div class="rider-arrow">${ARROW_SVG}</div>`, iconSize: [40, 40], iconAnchor: [20, 20] });
    riderMarker = L.marker([lat, lon], { icon, keyboard: false, interactive: false, zIndexOffset: 1000 }).addTo(map);
    riderEl = riderMarker.getElement();
    riderEl.setAttribute("data-testid", "rider-marker");
    riderEl.setAttribute("role", "img");
    riderEl.setAttribute("aria-label", riderName());
    riderEl.classList.toggle("stale", signal.isStale(st.status));
  }

  function showJump() {
    riderEl.dataset.jumps = String(Number(riderEl.dataset.jumps || 0) + 1);
    const arrow = riderEl.firstElementChild;
    if (!arrow || reducedMotion()) return;
    arrow.classList.remove("jumped");
    void arrow.offsetWidth; // restart the fade if one is still running
    arrow.classList.add("jumped");
  }

  function setRoute(route) {
    split.setRoute(route);
    st.route = split.route;
    st.cum = split.cum;
    st.routeLen = split.length;
  }

  const drawSplit = (doneAlong) => split.draw(doneAlong);

  function fitAll() {
    const pts = [];
    if (st.route) pts.push(...st.route);
    for (const w of st.waypoints) pts.push([w.lon, w.lat]);
    if (st.snap && st.snap.destination) pts.push([st.snap.destination.lon, st.snap.destination.lat]);
    if (st.snap && st.snap.position) pts.push([st.snap.position.lon, st.snap.position.lat]);
    const b = lineBounds(pts);
    if (!b) return false;
    if (pts.length === 1 || (b[0][0] === b[1][0] && b[0][1] === b[1][1])) map.setView([b[0][1], b[0][0]], 16, { animate: false });
    else map.fitBounds([[b[0][1], b[0][0]], [b[1][1], b[1][0]]], { ...cardPadding(card), animate: false, maxZoom: 17 });
    return true;
  }

  // ---- protocol -------------------------------------------------------------
  function onSnapshot(s) {
    st.snap = s;
    st.rider = s.rider || null;
    st.status = s.status;
    st.progress = s.progress;
    st.eta = s.eta_s;
    st.remaining = s.remaining_m;
    st.doneM = s.done_m;
    st.destAlong = s.done_m !== null && s.remaining_m !== null && s.done_m !== undefined ? s.done_m + s.remaining_m : null;
    st.holdingIndex = null;
    st.waypoints = (s.waypoints || []).map((w) => ({ ...w }));
    signal.fromSnapshot(s);
    setRoute(s.route);
    setWaypoints();
    setDestination(s.destination);
    anim.reset(s.position, s.bearing);
    if (s.position) ensureRider(s.position.lat, s.position.lon);
    else if (riderMarker) { riderMarker.remove(); riderMarker = null; riderEl = null; }
    if (riderEl) riderEl.setAttribute("aria-label", riderName());
    if (!st.fitted) st.fitted = fitAll();
    drawSplit(st.doneM ?? 0);
    renderCard();
    draw(true);
    if (trailOn) loadTrail();
  }

  function onSegment(seg) {
    anim.push(seg);
    const first = seg.path && seg.path[0];
    if (first) ensureRider(first[1], first[0]);
    // A jump (PROTOCOL 6.2: the hub would not slide the marker that far that fast) is drawn
    // in place at once (a zero-length segment); a short fade-in says it jumped.
    if (seg.jump && riderEl) showJump();
    st.status = seg.status || st.status;
    if (st.status !== "holding") st.holdingIndex = null;
    st.progress = seg.progress_to;
    st.eta = seg.eta_s;
    st.remaining = seg.remaining_m;
    if (seg.done_m !== null && seg.done_m !== undefined && seg.remaining_m !== null && seg.remaining_m !== undefined) {
      st.destAlong = seg.done_m + seg.remaining_m;
    }
    st.segFrom = seg.progress_from;
    st.doneM = seg.done_m;
    if (!st.fitted) st.fitted = fitAll();
    renderCard();
  }

  function onEvent(ev, { replayed }) {
    // Replayed events (after a reconnect) are history: the snapshot before them is the state.
    if (replayed) return;
    if (signal.onEvent(ev)) { renderSignal(); return; }
    switch (ev.name) {
      case "waypoint_reached": {
        st.status = "holding";
        st.holdingIndex = ev.index;
        const i = st.waypoints.findIndex((w) => w.index === ev.index);
        if (i >= 0) markVisited(i);
        // without wait_at_waypoints the hub sends waypoint_resumed right after
        break;
      }
      case "waypoint_resumed": {
        const i = st.waypoints.findIndex((w) => w.index === ev.index);
        if (i >= 0) markVisited(i);
        st.holdingIndex = null;
        if (st.status === "holding") st.status = "moving";
        break;
      }
      case "arrived":
        st.status = "arrived";
        st.eta = 0;
        st.remaining = 0;
        if (st.route) st.progress = 1;
        break;
      case "off_route":
        st.status = "off_route";
        break;
      case "back_on_route":
        if (st.status === "off_route") st.status = "moving";
        break;
      case "rerouted":
        // the new snapshot follows (and redraws the route)
        if (!replayed) showRerouted(ev.reason);
        break;
      case "ended":
        st.status = "ended";
        break;
      case "trip_created":
        if (st.status === "unknown") st.status = "pending";
        break;
      default:
        break;
    }
    renderCard();
  }

  hub.subscribe(tripId, {
    mode: "segments",
    onSnapshot,
    onSegment,
    onEvent,
    onError: (e) => {
      banner.hidden = false;
      banner.textContent = e.code === "unauthorized" || e.code === "forbidden"
        ? "Not allowed to follow this trip: open the page with a valid ?token=."
        : `The hub refused: ${e.message}`;
    },
  });

  // ---- animation ------------------------------------------------------------
  let lastPan = 0;
  let lastDraw = 0;
  const currentDone = (p) => doneAlongNow(anim.segment, st.destAlong, st.status, st.doneM, p.fraction);

  function draw(force = false) {
    const now = performance.now();
    lastDraw = now;
    const p = anim.current();
    if (!p) return;
    ensureRider(p.lat, p.lon);
    riderMarker.setLatLng([p.lat, p.lon]);
    riderEl.setAttribute("data-lat", fmt(p.lat));
    riderEl.setAttribute("data-lon", fmt(p.lon));
    riderEl.dataset.moving = p.moving ? "true" : "false";
    const arrow = riderEl.firstElementChild;
    if (arrow && p.bearing !== null && p.bearing !== undefined) {
      arrow.style.transform = `rotate(${p.bearing}deg)`;
      riderEl.setAttribute("data-bearing", String(Math.round(p.bearing)));
    }
    if (st.route) drawSplit(currentDone(p));
    if (followBtn.getAttribute("aria-pressed") === "true" && (force || now - lastPan > 400)) {
      if (keepInView(map, p.lat, p.lon, !reducedMotion())) lastPan = now;
    }
  }

  function frame() {
    draw();
    requestAnimationFrame(frame);
  }
  requestAnimationFrame(frame);
  // Background tabs get no animation frames: keep the drawn state current anyway.
  setInterval(() => { if (performance.now() - lastDraw > 100) draw(); }, 100);
  // "Last update N min ago" counts on without any message from the hub.
  setInterval(renderSignal, SIGNAL_TICK_MS);
  // Segments carry neither the battery nor the stops' ETAs: the trip's own record brings them,
  // every 10 s while stops lie ahead, else every 30 s.
  let lastRefresh = performance.now();
  setInterval(() => {
    const stopsAhead = st.waypoints.some((w) => !w.visited);
    if (stopsAhead || performance.now() - lastRefresh >= BATTERY_REFRESH_MS) refreshFromHub();
  }, STOP_ETA_REFRESH_MS);
  async function refreshFromHub() {
    if (document.hidden || !st.snap || st.status === "unknown" || st.status === "ended") return;
    lastRefresh = performance.now();
    try {
      const body = await getJSON(`/v1/trips/${encodeURIComponent(tripId)}`);
      signal.refresh(body);
      mergeStops(body.waypoints);
      renderSignal();
      renderStops();
    } catch (_) {
      // the live subscription says what matters; the next refresh tries again
    }
  }

  /** The stops' ETAs and visits from a `GET` body; a changed set of stops waits for the
   *  snapshot that a new route brings. */
  function mergeStops(waypoints) {
    if (!Array.isArray(waypoints)) return;
    for (const fresh of waypoints) {
      const i = st.waypoints.findIndex((w) => w.index === fresh.index);
      if (i < 0) continue;
      const w = st.waypoints[i];
      if (fresh.visited && !w.visited) markVisited(i);
      if (!w.visited) { w.eta_s = fresh.eta_s ?? null; w.remaining_m = fresh.remaining_m ?? null; }
    }
  }

  // ---- toggles --------------------------------------------------------------
  followBtn.addEventListener("click", () => {
    const on = followBtn.getAttribute("aria-pressed") !== "true";
    followBtn.setAttribute("aria-pressed", on ? "true" : "false");
    if (on) { lastPan = 0; draw(true); }
  });
  map.on("dragstart", () => followBtn.setAttribute("aria-pressed", "false"));

  let trailOn = false;
  let trailTimer = null;
  async function loadTrail() {
    try {
      const f = await getJSON(`/v1/trips/${encodeURIComponent(tripId)}/trail`);
      if (!trailOn) return;
      trailLayer.clearLayers();
      const coords = (f && f.geometry && f.geometry.coordinates) || [];
      const reasons = (f && f.properties && f.properties.reason) || [];
      const times = (f && f.properties && f.properties.ts) || [];
      coords.forEach((c, i) => {
        const refused = reasons[i] !== null && reasons[i] !== undefined;
        const m = L.circleMarker([c[1], c[0]], {
          radius: refused ? 5 : 4,
          className: refused ? "trail-dot refused" : "trail-dot",
          color: refused ? "#dc2626" : "#0f766e",
          fillColor: refused ? "#ffffff" : "#14b8a6",
          fillOpacity: 1,
          weight: 2,
          dashArray: refused ? "2 2" : null,
          interactive: true,
        }).addTo(trailLayer);
        const when = times[i] ? new Date(times[i]).toLocaleTimeString() : "";
        m.bindTooltip(h("span", {}, refused ? `${when} refused: ${reasons[i]}` : `${when} fix`));
        const el = m.getElement();
        if (el) {
          el.setAttribute("data-testid", "trail-fix");
          el.setAttribute("data-reason", refused ? String(reasons[i]) : "");
        }
      });
    } catch (e) {
      console.warn("trail", e);
    }
  }
  trailBtn.addEventListener("click", () => {
    trailOn = !trailOn;
    trailBtn.setAttribute("aria-pressed", trailOn ? "true" : "false");
    legend.hidden = !trailOn;
    clearInterval(trailTimer);
    if (trailOn) {
      trailLayer.addTo(map);
      loadTrail();
      trailTimer = setInterval(loadTrail, 3000);
    } else {
      trailLayer.remove();
      trailLayer.clearLayers();
    }
  });

  return { hub, map };
}
