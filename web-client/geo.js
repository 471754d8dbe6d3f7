// Small geometry helpers on [lon, lat] lines (GeoJSON order). No dependencies.

const R = 6371008.8; // mean Earth radius, metres
const rad = (d) => (d * Math.PI) / 180;
const deg = (r) => (r * 180) / Math.PI;

/** Great-circle distance in metres between two [lon, lat] pairs. */
export function distance(a, b) {
  const dLat = rad(b[1] - a[1]);
  const dLon = rad(b[0] - a[0]);
  const s = Math.sin(dLat / 2) ** 2 + Math.cos(rad(a[1])) * Math.cos(rad(b[1])) * Math.sin(dLon / 2) ** 2;
  return 2 * R * Math.asin(Math.min(1, Math.sqrt(s)));
}

/** Initial bearing from a to b, degrees clockwise from north in [0, 360). */
export function bearing(a, b) {
  const y = Math.sin(rad(b[0] - a[0])) * Math.cos(rad(b[1]));
  const x = Math.cos(rad(a[1])) * Math.sin(rad(b[1])) - Math.sin(rad(a[1])) * Math.cos(rad(b[1])) * Math.cos(rad(b[0] - a[0]));
  return (deg(Math.atan2(y, x)) + 360) % 360;
}

/** Cumulative distances along a line: out[i] = length of line[0..i]. */
export function cumulative(line) {
  const out = new Array(line.length);
  let acc = 0;
  for (let i = 0; i < line.length; i++) {
    if (i > 0) acc += distance(line[i - 1], line[i]);
    out[i] = acc;
  }
  return out;
}

/** Total length of a line in metres. */
export function lineLength(line) {
  if (!line || line.length < 2) return 0;
  const c = cumulative(line);
  return c[c.length - 1];
}

function lerp(a, b, f) {
  return [a[0] + (b[0] - a[0]) * f, a[1] + (b[1] - a[1]) * f];
}

/**
 * The point at distance `d` along `line` (with its cumulative distances `cum`),
 * and the bearing of the piece it lies on.
 */
export function pointAt(line, cum, d) {
  const n = line.length;
  if (n === 0) return null;
  if (n === 1 || d <= 0) return { point: line[0].slice(0, 2), bearing: n > 1 ? firstBearing(line) : null, index: 0 };
  const total = cum[n - 1];
  if (d >= total) return { point: line[n - 1].slice(0, 2), bearing: lastBearing(line), index: n - 2 };
  let lo = 0, hi = n - 1;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (cum[mid] <= d) lo = mid; else hi = mid;
  }
  const segLen = cum[hi] - cum[lo];
  const f = segLen > 0 ? (d - cum[lo]) / segLen : 0;
  return { point: lerp(line[lo], line[hi], f), bearing: bearing(line[lo], line[hi]), index: lo };
}

function firstBearing(line) {
  for (let i = 1; i < line.length; i++) if (distance(line[0], line[i]) > 0) return bearing(line[0], line[i]);
  return null;
}
function lastBearing(line) {
  const last = line[line.length - 1];
  for (let i = line.length - 2; i >= 0; i--) if (distance(line[i], last) > 0) return bearing(line[i], last);
  return null;
}

/**
 * Splits a line at distance `d` along it: {done, left}, both [lon, lat] arrays that
 * share the split point.
 */
export function splitAt(line, cum, d) {
  if (!line || line.length === 0) return { done: [], left: [] };
  const total = cum[cum.length - 1];
  const dd = Math.max(0, Math.min(total, d));
  const at = pointAt(line, cum, dd);
  const done = [];
  const left = [];
  for (let i = 0; i < line.length; i++) {
    if (cum[i] < dd) done.push(line[i]);
    else if (cum[i] > dd) left.push(line[i]);
  }
  done.push(at.point);
  left.unshift(at.point);
  return { done, left };
}

/** [[west, south], [east, north]] of a [lon, lat] line, or null. */
export function bounds(points) {
  if (!points || points.length === 0) return null;
  let w = Infinity, s = Infinity, e = -Infinity, n = -Infinity;
  for (const p of points) {
    w = Math.min(w, p[0]); e = Math.max(e, p[0]);
    s = Math.min(s, p[1]); n = Math.max(n, p[1]);
  }
  return [[w, s], [e, n]];
}
