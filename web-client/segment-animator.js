// SegmentAnimator: turns TrackHub `segment` messages into a marker position at any
// moment, so a page can draw at its display's frame rate (requestAnimationFrame)
// from one message per animation. No dependency on the page or on Leaflet.
//
//   import { SegmentAnimator } from "/segment-animator.js";
//   const anim = new SegmentAnimator({ now: () => hub.hubNow() });
//   hub.subscribe(trip, { mode: "segments",
//     onSnapshot: s => anim.reset(s.position, s.bearing),
//     onSegment: seg => anim.push(seg) });
//   requestAnimationFrame(function draw() {
//     const p = anim.current();           // {lat, lon, bearing, fraction, moving, segment}
//     if (p) marker.setLatLng([p.lat, p.lon]);
//     requestAnimationFrame(draw);
//   });

import { cumulative, pointAt } from "./geo.js";

export class SegmentAnimator {
  /**
   * @param {object} [opts]
   * @param {() => number} [opts.now] the hub's time now in ms (default: Date.now, i.e.
   *   assumes the hub's clock is the local one); pass `client.hubNow.bind(client)`.
   */
  constructor({ now } = {}) {
    this.now = now || (() => Date.now());
    this.seg = null;        // {path, cum, total, t0, duration, msg}
    this.rest = null;       // {point:[lon,lat], bearing}
  }

  /** Places the marker at once (a snapshot's `position` {lat, lon} and `bearing`), or clears it. */
  reset(position, bearing = null) {
    this.seg = null;
    this.rest = position ? { point: [position.lon, position.lat], bearing } : null;
  }

  /**
   * Starts animating a `segment` message {path, t0, duration_ms, ...}. A jump (`jump: true`,
   * duration 0, one point) places the marker there at once: it never slides.
   */
  push(msg) {
    const path = (msg.path || []).filter((p) => Array.isArray(p) && p.length >= 2);
    if (path.length === 0) return;
    const cum = cumulative(path);
    const seg = {
      path,
      cum,
      total: cum[cum.length - 1],
      t0: typeof msg.t0 === "number" ? msg.t0 : this.now(),
      duration: Math.max(0, Number(msg.duration_ms) || 0),
      msg,
    };
    // Keep the bearing shown at t0 when the new path has no direction (a one-point path).
    const prevBearing = this.positionAt(seg.t0)?.bearing ?? null;
    seg.fallbackBearing = prevBearing;
    this.seg = seg;
  }

  /** The segment message being animated (or last animated), or null. */
  get segment() {
    return this.seg ? this.seg.msg : null;
  }

  /** Fraction (0..1) of the current segment done at hub time `t`. */
  fractionAt(t) {
    const s = this.seg;
    if (!s) return 1;
    if (s.duration <= 0) return 1;
    return Math.max(0, Math.min(1, (t - s.t0) / s.duration));
  }

  /**
   * Position at hub time `t` (ms): {lon, lat, bearing, fraction, moving, segment},
   * linear in distance along the segment's path; null before any position.
   */
  positionAt(t) {
    const s = this.seg;
    if (!s) {
      if (!this.rest) return null;
      return { lon: this.rest.point[0], lat: this.rest.point[1], bearing: this.rest.bearing, fraction: 1, moving: false, segment: null };
    }
    const f = this.fractionAt(t);
    const at = pointAt(s.path, s.cum, s.total * f);
    let b = at.bearing;
    if (b === null || b === undefined) b = s.msg.bearing ?? s.fallbackBearing ?? null;
    return { lon: at.point[0], lat: at.point[1], bearing: b, fraction: f, moving: f < 1 && s.total > 0, segment: s.msg };
  }

  /** Position now (using the `now` clock given to the constructor). */
  current() {
    return this.positionAt(this.now());
  }
}
