// The trips list (/): trips that have not ended, polled every 2 s.

import { h, getJSON, tripLink, etaText, statusWords, formatDistance } from "./util.js";

const STATUSES = "pending,moving,holding,off_route,arrived";
const POLL_MS = 2000;
const MAX_PAGES = 20;

async function fetchTrips(signal) {
  const trips = [];
  let after = null;
  for (let page = 0; page < MAX_PAGES; page++) {
    const q = new URLSearchParams({ status: STATUSES, limit: "1000" });
    if (after) q.set("after", after);
    const body = await getJSON(`/v1/trips?${q}`, { signal });
    trips.push(...(body.trips || []));
    if (!body.next) break;
    after = body.next;
  }
  return trips;
}

function holdingStop(trip) {
  if (trip.status !== "holding") return null;
  const wps = trip.waypoints || [];
  const pos = wps.findIndex((w) => !w.visited);
  return pos >= 0 ? pos + 1 : null;
}

function row(trip) {
  // An arrived trip is there: 100 %, even while its marker covers its last metres.
  const pct = typeof trip.progress === "number"
    ? (trip.status === "arrived" ? 100 : Math.round(Math.max(0, Math.min(1, trip.progress)) * 100)) : null;
  const riderName = trip.rider && (trip.rider.name || trip.rider.id);
  const stops = (trip.waypoints || []).length;
  const visited = (trip.waypoints || []).filter((w) => w.visited).length;
  return h("li", { class: "trip-row", "data-testid": "trip-row", "data-trip": trip.trip, "data-status": trip.status },
    h("a", { class: "trip-link", href: tripLink(trip.trip), "aria-label": `Trip ${trip.trip}${riderName ? `, ${riderName}` : ""}: ${statusWords(trip.status, { holdingStop: holdingStop(trip) })}` },
      h("div", { class: "trip-main" },
        h("div", { class: "avatar", "aria-hidden": "true" }, (riderName || trip.trip || "?").trim().charAt(0).toUpperCase()),
        h("div", { class: "trip-text" },
          h("div", { class: "trip-title" }, riderName || trip.trip),
          h("div", { class: "trip-sub" },
            riderName ? h("span", { class: "mono" }, trip.trip) : null,
            stops ? h("span", {}, `${visited}/${stops} stops`) : null,
            trip.remaining_m !== null && trip.remaining_m !== undefined ? h("span", {}, `${formatDistance(trip.remaining_m)} left`) : null)),
        h("span", { class: `chip status-${trip.status}` }, statusWords(trip.status, { holdingStop: holdingStop(trip) }))),
      h("div", { class: "trip-meta" },
        h("div", pct === null
          ? { class: "bar", role: "progressbar", "aria-label": "Progress", "aria-valuemin": 0, "aria-valuemax": 100 }
          : { class: "bar", role: "progressbar", "aria-label": "Progress", "aria-valuemin": 0, "aria-valuemax": 100, "aria-valuenow": pct },
          barFill(pct)),
        h("span", { class: "trip-eta" }, trip.status === "pending" ? "Not started" : etaText(trip.status, trip.eta_s)))));
}

function barFill(pct) {
  const el = h("span", { class: "bar-fill" });
  el.style.width = `${pct ?? 0}%`; // el.style, not a style attribute: the CSP refuses those
  return el;
}

export function mountTripsList(main) {
  document.title = "Trips · TrackHub";
  const list = h("ul", { class: "trip-list", "aria-live": "polite", "aria-busy": "true" });
  const note = h("p", { class: "list-note", role: "status" }, "Loading trips…");
  const count = h("span", { class: "count-badge", "data-testid": "trip-count" }, "");
  main.replaceChildren(h("section", { class: "page page-list" },
    h("div", { class: "page-head" }, h("h1", {}, "Live trips ", count), h("p", { class: "muted" }, "Trips that have not ended. Updated every 2 seconds.")),
    note, list));

  let ctrl = null;
  let stopped = false;
  const rendered = new Map(); // id -> JSON string, to avoid needless DOM churn

  async function poll() {
    if (stopped) return;
    ctrl = new AbortController();
    try {
      const trips = await fetchTrips(ctrl.signal);
      trips.sort((a, b) => (a.trip < b.trip ? -1 : a.trip > b.trip ? 1 : 0));
      const seen = new Set();
      let prev = null;
      for (const t of trips) {
        seen.add(t.trip);
        const key = JSON.stringify(t);
        let el = list.querySelector(`[data-trip="${CSS.escape(t.trip)}"]`);
        if (!el || rendered.get(t.trip) !== key) {
          const fresh = row(t);
          if (el) el.replaceWith(fresh); else list.append(fresh);
          el = fresh;
          rendered.set(t.trip, key);
        }
        // keep order
        if (prev ? prev.nextSibling !== el : list.firstChild !== el) {
          if (prev) prev.after(el); else list.prepend(el);
        }
        prev = el;
      }
      for (const el of [...list.children]) {
        if (!seen.has(el.dataset.trip)) { el.remove(); rendered.delete(el.dataset.trip); }
      }
      count.textContent = String(trips.length);
      note.textContent = trips.length ? "" : "No live trips right now.";
      note.classList.toggle("error", false);
      list.setAttribute("aria-busy", "false");
    } catch (e) {
      if (e.name === "AbortError") return;
      note.textContent = e.status === 401 || e.status === 403
        ? "Not allowed: open this page with a valid ?token=."
        : `Cannot reach the hub (${e.message}). Retrying…`;
      note.classList.toggle("error", true);
    } finally {
      if (!stopped) setTimeout(poll, POLL_MS);
    }
  }
  poll();
  return () => { stopped = true; if (ctrl) ctrl.abort(); };
}
