// The planned route drawn as two lines split at the distance done along it: done solid,
// the rest dotted (PROTOCOL 10's hooks: data-testid="route-done" / "route-left", each with
// data-length-m). The trip view and the customer's page both draw it with this.
import { cumulative, splitAt } from "./geo.js";

const LINE = { color: "#2563eb", lineCap: "round", interactive: false };

export class RouteSplit {
  /** Adds both lines to `layer` (a map or a layer group). */
  constructor(layer) {
    this.doneLine = L.polyline([], { ...LINE, className: "route-done", weight: 6, opacity: 0.95, lineJoin: "round" });
    this.leftLine = L.polyline([], { ...LINE, className: "route-left", weight: 5, opacity: 0.7, dashArray: "1 10" });
    this.leftLine.addTo(layer);
    this.doneLine.addTo(layer);
    this.doneEl = this.doneLine.getElement();
    this.leftEl = this.leftLine.getElement();
    this.doneEl.setAttribute("data-testid", "route-done");
    this.leftEl.setAttribute("data-testid", "route-left");
    this.setRoute(null);
  }

  /** A new route ([lon, lat] pairs; fewer than two points: none). */
  setRoute(route) {
    this.route = route && route.length >= 2 ? route : null;
    this.cum = this.route ? cumulative(this.route) : null;
    this.length = this.cum ? this.cum[this.cum.length - 1] : 0;
    this.lastSplit = null;
    if (!this.route) {
      this.doneLine.setLatLngs([]);
      this.leftLine.setLatLngs([]);
      this.doneEl.setAttribute("data-length-m", "0");
      this.leftEl.setAttribute("data-length-m", "0");
    }
  }

  /** Splits at `doneAlong` metres (clamped); a change under 5 cm is not redrawn. */
  draw(doneAlong) {
    if (!this.route) return;
    const d = Math.max(0, Math.min(this.length, doneAlong ?? 0));
    if (this.lastSplit !== null && Math.abs(this.lastSplit - d) < 0.05) return;
    this.lastSplit = d;
    const { done, left } = splitAt(this.route, this.cum, d);
    this.doneLine.setLatLngs(done.map((p) => [p[1], p[0]]));
    this.leftLine.setLatLngs(left.map((p) => [p[1], p[0]]));
    this.doneEl.setAttribute("data-length-m", (Math.round(d * 10) / 10).toFixed(1));
    this.leftEl.setAttribute("data-length-m", (Math.round((this.length - d) * 10) / 10).toFixed(1));
  }
}

/**
 * The distance done along the route where the marker is now: within the running segment's
 * progress span when it has one (and the rider is on the route), else the last known.
 * `fraction` is how far through the segment the marker is (SegmentAnimator's `current()`).
 */
export function doneAlongNow(segment, destAlong, status, lastDoneM, fraction) {
  if (segment && destAlong !== null && typeof segment.progress_from === "number" && typeof segment.progress_to === "number" && status !== "off_route") {
    const from = segment.progress_from * destAlong;
    const to = segment.progress_to * destAlong;
    return from + (to - from) * fraction;
  }
  return lastDoneM ?? 0;
}
