// Page helpers shared by the views: URL parameters, token, HTTP, links, maps.

import { connect, pageHubUrl } from "./trackhub-client.js";
import { attachBasemap, basemapMode } from "./basemap.js";

export const params = new URLSearchParams(location.search);
export const token = params.get("token") || null;

/** Query string to carry from page to page (the token, the tile and basemap choices). */
export function carriedQuery(extra = {}) {
  const q = new URLSearchParams();
  if (token) q.set("token", token);
  for (const k of ["tiles", "basemap"]) if (params.get(k)) q.set(k, params.get(k));
  for (const [k, v] of Object.entries(extra)) if (v !== null && v !== undefined) q.set(k, v);
  const s = q.toString();
  return s ? `?${s}` : "";
}

/** Link to a page of this app, keeping ?token= (and ?tiles=, ?basemap=). */
export function pageLink(path, extra) {
  return path + carriedQuery(extra);
}

export function tripLink(id) {
  return pageLink(`/trips/${encodeURIComponent(id)}`);
}

/** GET a JSON resource of the hub, with the page's token as a Bearer token. */
export async function getJSON(path, { signal } = {}) {
  const headers = { Accept: "application/json" };
  if (token) headers.Authorization = `Bearer ${token}`;
  const res = await fetch(path, { headers, signal, cache: "no-store" });
  let body = null;
  try { body = await res.json(); } catch (_) { /* not JSON */ }
  if (!res.ok) {
    const err = new Error((body && body.error && body.error.message) || `HTTP ${res.status}`);
    err.status = res.status;
    err.code = body && body.error && body.error.code;
    throw err;
  }
  return body;
}

/** POST a JSON body to the hub, with the page's token as a Bearer token; the answer's JSON
 *  (an error as getJSON throws it). */
export async function postJSON(path, body) {
  const headers = { Accept: "application/json", "Content-Type": "application/json" };
  if (token) headers.Authorization = `Bearer ${token}`;
  const res = await fetch(path, { method: "POST", headers, body: JSON.stringify(body), cache: "no-store" });
  let answer = null;
  try { answer = await res.json(); } catch (_) { /* not JSON */ }
  if (!res.ok) {
    const err = new Error((answer && answer.error && answer.error.message) || `HTTP ${res.status}`);
    err.status = res.status;
    err.code = answer && answer.error && answer.error.code;
    throw err;
  }
  return answer;
}

/** A reconnecting protocol client for the hub that served this page. */
export function hubClient(onState) {
  return connect(pageHubUrl(), { token, onState });
}

/** h("div", {class: "x", "data-testid": "y"}, child, "text"): children are nodes or text,
 *  never markup. No `style` attribute (the page's CSP refuses it): set el.style instead. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") el.className = v;
    else if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

/** For Leaflet options that take markup (the attribution): the text shown as text.
 *  Nothing from the URL or a trip reaches Leaflet, or the page, as markup. */
export function escapeHtml(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
}

export const reducedMotion = () => window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;

/** The tile URL template: ?tiles=, else <meta name="trackhub-tiles">, else OSM; "none" for no tiles. */
export function tileTemplate() {
  const fromUrl = params.get("tiles");
  if (fromUrl) return fromUrl;
  const meta = document.querySelector('meta[name="trackhub-tiles"]');
  if (meta && meta.content.trim()) return meta.content.trim();
  return "https://tile.openstreetmap.org/{z}/{x}/{y}.png";
}

/** A Leaflet map in `el` with the configured tiles. Without them (none configured, or they
 *  fail to load) it draws the sample roads as a vector basemap (basemap.js) on a plain
 *  background; `?basemap=vector` always draws them, `?basemap=none` never. */
export function makeMap(el, options = {}) {
  const map = L.map(el, {
    zoomControl: false,
    worldCopyJump: false,
    preferCanvas: false,
    zoomAnimation: !reducedMotion(),
    fadeAnimation: !reducedMotion(),
    markerZoomAnimation: !reducedMotion(),
    ...options,
  });
  L.control.zoom({ position: "topright" }).addTo(map);
  const tpl = tileTemplate();
  if (tpl && tpl !== "none") {
    const isOsm = /tile\.openstreetmap\.org/.test(tpl);
    const metaAttr = document.querySelector('meta[name="trackhub-tiles-attribution"]');
    // Leaflet puts attributions in as markup: one from the URL or the page is text.
    const attribution = isOsm
      ? '© <a href="https://www.openstreetmap.org/copyright">OpenStreetMap</a> contributors'
      : escapeHtml(params.get("tiles_attribution") || (metaAttr && metaAttr.content) || "");
    const layer = L.tileLayer(tpl, { maxZoom: 19, attribution, crossOrigin: false });
    layer.on("tileerror", () => { el.classList.add("tiles-failing"); });
    layer.on("tileload", () => { el.classList.remove("tiles-failing"); });
    layer.addTo(map);
    attachBasemap(map, { tileLayer: layer, mode: basemapMode(params) });
  } else {
    map.attributionControl.addAttribution("TrackHub");
    attachBasemap(map, { tileLayer: null, mode: basemapMode(params) });
  }
  return map;
}

/** The connection indicator (data-testid="connection"), put in the top bar. */
export function connectionIndicator() {
  const slot = document.getElementById("connection-slot");
  const el = h("div", { class: "connection", "data-testid": "connection", "data-state": "connecting", role: "status", "aria-live": "polite" },
    h("span", { class: "dot", "aria-hidden": "true" }), h("span", { class: "label" }, "Connecting…"));
  slot.replaceChildren(el);
  const words = { open: "Live", connecting: "Connecting…", closed: "Offline" };
  return (state) => {
    el.dataset.state = state;
    el.querySelector(".label").textContent = words[state] || state;
    el.title = state === "open" ? "Connected to the hub" : state === "connecting" ? "Connecting to the hub" : "Not connected; retrying";
  };
}

export function formatDistance(m) {
  if (m === null || m === undefined) return "—";
  if (m < 1000) return `${Math.round(m)} m`;
  return `${(m / 1000).toFixed(m < 10000 ? 1 : 0)} km`;
}

export function etaText(status, eta_s) {
  if (status === "arrived") return "Arrived";
  if (status === "ended") return "Trip ended";
  if (eta_s === null || eta_s === undefined) return "—";
  const min = Math.max(1, Math.ceil(eta_s / 60));
  if (min >= 60) {
    const hrs = Math.floor(min / 60);
    const rest = min % 60;
    return `Arriving in ${hrs} h${rest ? ` ${rest} min` : ""}`;
  }
  return `Arriving in ${min} min`;
}

const STATUS_WORDS = {
  unknown: "Unknown trip",
  pending: "Waiting for the rider",
  moving: "On the way",
  holding: "Holding",
  off_route: "Off route",
  arrived: "Arrived",
  ended: "Ended",
};

export function statusWords(status, { holdingStop } = {}) {
  if (status === "holding" && holdingStop) return `Holding at stop ${holdingStop}`;
  return STATUS_WORDS[status] || status || "—";
}

/** fitBounds padding that keeps clear of the floating card (left on wide screens, bottom on narrow). */
export function cardPadding(card, extra = 40) {
  const r = card ? card.getBoundingClientRect() : null;
  if (!r || window.innerWidth <= 640) {
    return { paddingTopLeft: [extra, extra], paddingBottomRight: [extra, extra + (r ? r.height : 0)] };
  }
  return { paddingTopLeft: [r.width + 16 + extra, extra], paddingBottomRight: [extra, extra] };
}
