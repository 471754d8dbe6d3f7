// What the customer's page knows of a link for one stop (PROTOCOL 17 "A link for one stop"):
// which stop it follows, how many stops lie before it, the ETA there, whether the courier
// is shown, whether the stop was reached; and the words the card says while the courier
// is hidden ("2 stops before yours · about 25 min"). No DOM, no map: share-view.js draws.

/** The words for how many stops lie before the customer's: "Next stop is yours" for 0. */
export function stopsBeforeText(n) {
  if (n === 0) return "Next stop is yours";
  if (n === 1) return "1 stop before yours";
  return `${n} stops before yours`;
}

/**
 * A rough ETA for a courier the customer cannot see: "arriving now" under a minute, whole
 * minutes up to a quarter of an hour, then to the nearest 5 minutes ("about 25 min",
 * "about 1 h 15 min"). The hub sends a new ETA only when it moved by a minute or more, so
 * finer words would promise more than they know.
 */
export function aboutEta(etaS) {
  if (etaS < 60) return "arriving now";
  const min = etaS / 60;
  if (min < 15) return `about ${Math.max(1, Math.round(min))} min`;
  const rounded = Math.round(min / 5) * 5;
  if (rounded < 60) return `about ${rounded} min`;
  const hrs = Math.floor(rounded / 60);
  const rest = rounded % 60;
  return `about ${hrs} h${rest ? ` ${rest} min` : ""}`;
}

/** The card's headline while the courier is hidden: "2 stops before yours · about 25 min". */
export function hiddenHeadline(stopsBefore, etaS) {
  if (stopsBefore === null || stopsBefore === undefined) return "Your order is on its way";
  const stops = stopsBeforeText(stopsBefore);
  return etaS === null || etaS === undefined ? stops : `${stops} · ${aboutEta(etaS)}`;
}

/**
 * The state of a link for one stop, from the token's claim at first and then from the wire,
 * which wins: the snapshot's `stop` object (its absence says the link follows no stop),
 * `stop` messages, and the stop's own `waypoint_reached` (`arrived` for "destination").
 */
export class StopFollow {
  /** `claimedStop`: the token's `stop` claim (unverified; a hint until the first snapshot). */
  constructor(claimedStop) {
    this.id = typeof claimedStop === "string" ? claimedStop : null;
    this.stopsBefore = null;
    this.etaS = null;
    this.visible = false;
    this.reached = false;
  }

  /** Whether this page follows one stop (a link for one stop) rather than the whole trip. */
  get active() {
    return this.id !== null;
  }

  /** A snapshot (or the link's `GET /v1/trips/{id}`, which answers the same). */
  fromSnapshot(s) {
    const stop = s && s.stop && typeof s.stop === "object" ? s.stop : null;
    if (!stop || typeof stop.id !== "string") {
      this.id = null;
      return;
    }
    this.id = stop.id;
    this.stopsBefore = typeof stop.stops_before === "number" ? stop.stops_before : null;
    this.etaS = typeof stop.eta_s === "number" ? stop.eta_s : null;
    this.reached = stop.reached === true;
    // The `stop` message right after it says `visible`; until then the position says it.
    this.visible = !this.reached && !!s.position;
  }

  /** A `stop` message; returns whether the courier's visibility changed. */
  fromStopMessage(m) {
    if (typeof m.stop === "string") this.id = m.stop;
    if (typeof m.stops_before === "number") this.stopsBefore = m.stops_before;
    this.etaS = typeof m.eta_s === "number" ? m.eta_s : null;
    const visible = m.visible === true && !this.reached;
    const changed = visible !== this.visible;
    this.visible = visible;
    return changed;
  }

  /** An event; returns whether it is this stop being reached. */
  fromEvent(ev) {
    if (!this.active || this.reached) return false;
    const mine = (ev.name === "waypoint_reached" && ev.stop === this.id)
      || (ev.name === "arrived" && this.id === "destination");
    if (mine) this.markReached();
    return mine;
  }

  /** The stop was reached (its event, or `unsubscribed {reason: "arrived"}`). */
  markReached() {
    this.reached = true;
    this.stopsBefore = 0;
    this.etaS = 0;
  }
}
