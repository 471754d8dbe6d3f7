// The fleet (/fleet?lat=&lon=&zoom=): cluster bubbles and single riders from the
// hub's `viewport`/`clusters` messages. Without lat/lon/zoom, it first asks for the
// whole world at zoom 2 and fits the map to what it gets. A single rider whose courier has
// gone silent (`stale`, PROTOCOL 18) is greyed.

import { h, hubClient, connectionIndicator, makeMap, params, tripLink, reducedMotion, cardPadding } from "./util.js";

const WORLD = [-180, -85.05112878, 180, 85.05112878];
const DEBOUNCE_MS = 150;

const ARROW_SVG = `<svg viewBox="0 0 32 32" aria-hidden="true" focusable="false">
  <circle cx="16" cy="16" r="13" class="rider-disc"/>
  <path d="M16 7 22 23 16 19.5 10 23z" class="rider-arrowhead"/>
</svg>`;

function num(v) {
  if (v === null || v === "") return null;
  const n = Number(v);
  return Number.isFinite(n) ? n : null;
}

function wrapLon(lon) {
  let x = ((lon + 180) % 360 + 360) % 360 - 180;
  if (x === -180 && lon > 0) x = 180;
  return x;
}

/** The map's view as a protocol bbox [west, south, east, north]. */
function mapBbox(map) {
  const b = map.getBounds();
  const s = Math.max(-85.05112878, b.getSouth());
  const n = Math.min(85.05112878, b.getNorth());
  const w = b.getWest();
  const e = b.getEast();
  if (e - w >= 360) return [-180, s, 180, n];
  return [wrapLon(w), s, wrapLon(e), n];
}

function bubbleSize(count) {
  return Math.round(Math.min(72, 30 + 9 * Math.log10(Math.max(2, count)) * 2));
}

export function mountFleetView(main) {
  document.title = "Fleet · TrackHub";
  const setConn = connectionIndicator();
  const mapEl = h("div", { class: "map", id: "fleet-map", role: "region", "aria-label": "Fleet map" });
  const totalEl = h("strong", { class: "total", "data-testid": "fleet-total", "data-total": "" }, "–");
  const shownEl = h("span", { class: "muted" }, "");
  const truncEl = h("p", { class: "banner", hidden: true }, "Too many items to show them all: zoom in.");
  const card = h("section", { class: "card fleet-card", "aria-label": "Fleet summary" },
    h("div", { class: "card-head" }, h("h1", { class: "card-title" }, "Fleet"), h("span", { class: "chip status-moving" }, "Live")),
    h("p", { class: "fleet-line", "aria-live": "polite" }, totalEl, " riders in the fleet"),
    h("p", { class: "fleet-sub" }, shownEl),
    truncEl,
    h("p", { class: "muted small" }, "Select a bubble to zoom in, a rider to follow the trip. Bubbles and riders take the keyboard focus; Enter opens them."));
  main.replaceChildren(h("div", { class: "page page-map" }, mapEl, card));

  const map = makeMap(mapEl, { minZoom: 1 });
  const lat = num(params.get("lat"));
  const lon = num(params.get("lon"));
  const zoom = num(params.get("zoom"));
  const explicit = lat !== null && lon !== null;
  map.setView([explicit ? lat : 20, explicit ? lon : 0], zoom !== null ? zoom : (explicit ? 13 : 2), { animate: false });

  const layer = L.layerGroup().addTo(map);
  const markers = new Map(); // item id -> {marker, key}
  // Without ?lat/lon/zoom the view fits the whole fleet: the world's answer is fitted, and
  // fitted again whenever the fleet's size changes, until the user moves the map.
  const autoFit = !explicit && zoom === null;
  let userMoved = false;
  let fittedTotal = null;
  let fitting = autoFit; // waiting for the world's answer to fit the view
  let lastMsg = null;

  const hub = hubClient((state) => setConn(state));

  function activate(item) {
    if (item.count > 1) {
      if (Array.isArray(item.bounds) && (item.bounds[0] !== item.bounds[2] || item.bounds[1] !== item.bounds[3])) {
        const [w, s, e, n] = item.bounds;
        const target = map.getBoundsZoom([[s, w], [n, e]], false, L.point(40, 40));
        const z = Math.max(target, Math.min(map.getMaxZoom(), item.expansion_zoom ?? map.getZoom() + 1));
        if (z > target) map.setView([(s + n) / 2, (w + e) / 2], z, { animate: !reducedMotion() });
        else map.fitBounds([[s, w], [n, e]], { padding: [40, 40], animate: !reducedMotion() });
      } else {
        map.setView([item.lat, item.lon], Math.min(map.getMaxZoom(), item.expansion_zoom ?? map.getZoom() + 2), { animate: !reducedMotion() });
      }
    } else if (item.trip) {
      location.href = tripLink(item.trip);
    }
  }

  function makeIcon(item) {
    if (item.count > 1) {
      const size = bubbleSize(item.count);
      const label = item.count >= 10000 ? `${Math.round(item.count / 1000)}k` : String(item.count);
      // An element, not markup: the CSP refuses style attributes, el.style is allowed.
      const bubble = h("span", {}, label);
      bubble.style.width = bubble.style.height = bubble.style.lineHeight = `${size}px`;
      return L.divIcon({ className: "cluster-icon", html: bubble, iconSize: [size, size], iconAnchor: [size / 2, size / 2] });
    }
    const status = String(item.status || "moving").replace(/[^a-z_]/g, "");
    return L.divIcon({ className: `fleet-rider-icon status-${status}${item.stale === true ? " stale" : ""}`, html: `<div class="rider-arrow">${ARROW_SVG}</div>`, iconSize: [32, 32], iconAnchor: [16, 16] });
  }

  function decorate(el, item) {
    el.setAttribute("tabindex", "0");
    el.setAttribute("role", item.count > 1 ? "button" : "link");
    if (item.count > 1) {
      el.setAttribute("data-testid", "cluster");
      el.setAttribute("data-count", String(item.count));
      el.setAttribute("aria-label", `${item.count} riders`);
      el.removeAttribute("data-trip");
    } else {
      el.setAttribute("data-testid", "fleet-rider");
      el.setAttribute("data-trip", item.trip || item.id);
      el.setAttribute("data-status", item.status || "");
      el.setAttribute("data-stale", item.stale === true ? "true" : "false");
      const state = [item.status ? item.status.replace("_", " ") : null, item.stale === true ? "no signal" : null].filter(Boolean).join(", ");
      el.setAttribute("aria-label", `Rider on trip ${item.trip || item.id}${state ? ` (${state})` : ""}`);
      const arrow = el.firstElementChild;
      if (arrow && typeof item.bearing === "number") arrow.style.transform = `rotate(${item.bearing}deg)`;
    }
  }

  function render(msg) {
    lastMsg = msg;
    totalEl.textContent = String(msg.total);
    totalEl.dataset.total = String(msg.total);
    const inView = (msg.items || []).reduce((a, it) => a + it.count, 0);
    shownEl.textContent = `${inView} in view · ${(msg.items || []).length} markers · zoom ${msg.zoom}`;
    truncEl.hidden = !msg.truncated;

    const seen = new Set();
    for (const item of msg.items || []) {
      seen.add(item.id);
      const key = `${item.count > 1 ? "c" : "r"}:${item.count}:${item.status || ""}:${item.stale === true}`;
      let entry = markers.get(item.id);
      if (entry && entry.key !== key) { entry.marker.remove(); markers.delete(item.id); entry = null; }
      if (!entry) {
        const marker = L.marker([item.lat, item.lon], { icon: makeIcon(item), keyboard: false, riseOnHover: true, zIndexOffset: item.count > 1 ? 100 : 0 });
        marker.addTo(layer);
        entry = { marker, key, item };
        marker.on("click", () => activate(entry.item));
        const el = marker.getElement();
        el.addEventListener("keydown", (e) => {
          if (e.key === "Enter" || e.key === " ") { e.preventDefault(); activate(entry.item); }
        });
        markers.set(item.id, entry);
      } else {
        entry.marker.setLatLng([item.lat, item.lon]);
      }
      entry.item = item;
      decorate(entry.marker.getElement(), item);
    }
    for (const [id, entry] of markers) {
      if (!seen.has(id)) { entry.marker.remove(); markers.delete(id); }
    }

    // The fleet changed size since the last fit: ask the world again and fit to that.
    if (autoFit && !userMoved && !fitting && msg.total > 0 && msg.total !== fittedTotal) {
      fitting = true;
      lastSent = JSON.stringify([WORLD, 2]);
      hub.viewport(WORLD, 2, render);
      return;
    }
    // Fit to the world's answer once it has riders in it (an empty fleet keeps waiting).
    if (fitting && (msg.items || []).length > 0) {
      fitting = false;
      fittedTotal = msg.total;
      const pts = [];
      for (const it of msg.items || []) {
        if (Array.isArray(it.bounds)) { pts.push([it.bounds[1], it.bounds[0]], [it.bounds[3], it.bounds[2]]); }
        else pts.push([it.lat, it.lon]);
      }
      if (pts.length === 1) map.setView(pts[0], 14, { animate: false });
      else if (pts.length > 1) map.fitBounds(pts, { ...cardPadding(card, 48), maxZoom: 15, animate: false });
      sendViewport();
    }
  }

  let debounce = null;
  let lastSent = null;
  function sendViewport(force = false) {
    clearTimeout(debounce);
    const bbox = mapBbox(map);
    const z = Math.max(0, Math.min(22, Math.floor(map.getZoom())));
    const key = JSON.stringify([bbox, z]);
    if (!force && key === lastSent) return;
    lastSent = key;
    mapEl.dataset.viewport = key;
    hub.viewport(bbox, z, render);
  }
  function scheduleViewport() {
    if (fitting) return;
    clearTimeout(debounce);
    debounce = setTimeout(() => sendViewport(), DEBOUNCE_MS);
  }
  map.on("moveend zoomend", scheduleViewport);
  // The user moving the map ends the wait for a fleet to fit.
  // Any move by the user ends the automatic fitting.
  const userTookOver = () => { fitting = false; userMoved = true; };
  map.on("dragstart", userTookOver);
  for (const type of ["wheel", "mousedown", "touchstart", "keydown"]) {
    mapEl.addEventListener(type, userTookOver, { passive: true });
  }

  if (fitting) {
    lastSent = JSON.stringify([WORLD, 2]);
    hub.viewport(WORLD, 2, render);
  } else {
    sendViewport(true);
  }

  return { hub, map, get last() { return lastMsg; } };
}
