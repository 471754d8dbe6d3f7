// The courier's signal (PROTOCOL 18), as the trip view and the customer's page show it:
// whether the hub judges the trip stale (no fix for longer than its courier's own rhythm
// allows), when its last fix arrived, and the phone's battery. The hub decides staleness;
// a page only follows the snapshot's `stale`, `last_fix_t` and `battery` and the events
// `signal_lost`, `signal_back` and `battery_low`, and words the time since the last fix
// from the hub's clock, so "Last update N min ago" keeps counting without new messages.

/** Statuses in which a trip can be stale: a pending, arrived or ended trip never is. */
const CAN_BE_STALE = new Set(["moving", "holding", "off_route"]);

/** The level at or under which the hub sends `battery_low`: the page marks it the same way. */
export const BATTERY_LOW_PERCENT = 15;

/** How often a page rewords "Last update …" while a trip is stale. */
export const SIGNAL_TICK_MS = 1000;

function numberOrNull(v) {
  return typeof v === "number" && Number.isFinite(v) ? v : null;
}

/** What a page knows of one trip's courier signal. */
export class CourierSignal {
  constructor() {
    this.stale = false;
    this.lastFixT = null; // the hub's clock when the last stored fix arrived
    this.battery = null;  // whole percent, or null when no fix has reported one
  }

  /** Takes the state from a snapshot (or `GET /v1/trips/{id}`): it is the whole truth. */
  fromSnapshot(s) {
    this.stale = s.stale === true;
    this.lastFixT = numberOrNull(s.last_fix_t);
    this.battery = numberOrNull(s.battery);
  }

  /** Takes what `GET /v1/trips/{id}` says of the last fix and battery, not staleness:
   *  events bring that in order, and a poll answer may be older than the last event. */
  refresh(s) {
    const t = numberOrNull(s.last_fix_t);
    if (t !== null && (this.lastFixT === null || t >= this.lastFixT)) {
      this.lastFixT = t;
      if (s.battery !== undefined) this.battery = numberOrNull(s.battery);
    }
  }

  /** Applies a live event; returns whether it was one of the signal's. */
  onEvent(ev) {
    switch (ev.name) {
      case "signal_lost":
        this.stale = true;
        if (numberOrNull(ev.last_fix_t) !== null) this.lastFixT = ev.last_fix_t;
        if (numberOrNull(ev.battery) !== null) this.battery = ev.battery;
        return true;
      case "signal_back":
        // Sent when the fix that ends the silence arrives: its `t` is that arrival.
        this.stale = false;
        if (numberOrNull(ev.t) !== null) this.lastFixT = ev.t;
        return true;
      case "battery_low":
        if (numberOrNull(ev.battery) !== null) this.battery = ev.battery;
        return true;
      default:
        return false;
    }
  }

  /** Whether the page shows the trip as stale while it has `status`. */
  isStale(status) {
    return this.stale && CAN_BE_STALE.has(status);
  }

  /** "Last update 4 min ago" at the hub's time `hubNow`, or "No signal" without a last fix. */
  lastUpdateText(hubNow) {
    return this.lastFixT === null ? "No signal" : `Last update ${agoWords(hubNow - this.lastFixT)}`;
  }
}

/** How long ago `ms` milliseconds was, in plain words: "just now", "1 second ago",
 *  "40 seconds ago", "4 min ago", "2 h 5 min ago", "3 days ago". */
export function agoWords(ms) {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 1) return "just now";
  if (s === 1) return "1 second ago";
  if (s < 60) return `${s} seconds ago`;
  const min = Math.floor(s / 60);
  if (min < 60) return `${min} min ago`;
  const hrs = Math.floor(min / 60);
  if (hrs < 24) {
    const rest = min % 60;
    return `${hrs} h${rest ? ` ${rest} min` : ""} ago`;
  }
  const days = Math.floor(hrs / 24);
  return days === 1 ? "1 day ago" : `${days} days ago`;
}

/** "Battery 54 %" for a level, "" without one. */
export function batteryText(battery) {
  return battery === null || battery === undefined ? "" : `Battery ${Math.round(battery)} %`;
}
