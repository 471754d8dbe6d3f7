// TrackHub protocol client (protocol version 1), as a standalone ES module.
//
// No dependency on the page, the DOM or Leaflet: it needs only a WebSocket
// implementation (the browser's, or one passed as `WebSocketImpl`).
//
//   import { connect } from "/trackhub-client.js";
//   const hub = connect("wss://hub.example/v1/ws", { token, onState: s => ... });
//   hub.subscribe("T1", { mode: "segments", onSnapshot, onSegment, onEvent });
//   hub.viewport([-10, 36, -6, 42], 8, clusters => ...);
//
// See docs/protocol-client.md for the whole API.

export const PROTOCOL = "trackhub.v1";

/** Local wall clock in epoch milliseconds, monotonic where the platform allows. */
export function localNow() {
  if (typeof performance !== "undefined" && performance.timeOrigin) {
    return performance.timeOrigin + performance.now();
  }
  return Date.now();
}

/**
 * Estimates the hub's clock from `pong.t` (round-trip midpoint, best RTT wins) and
 * from the `t`/`t0` of received messages (a message cannot come from the future,
 * so `t - receivedAt` is a lower bound of the offset).
 */
export class HubClock {
  constructor() {
    this.offset = 0;        // hub time - local time, ms
    this.known = false;
    this.bestRtt = Infinity;
    this.lowerBound = -Infinity;
  }
  /** A ping sent at local time `sent`, answered by a pong with hub time `hubT`, received at `recv`. */
  samplePong(hubT, sent, recv) {
    const rtt = Math.max(0, recv - sent);
    // Keep the tightest sample, but let old samples age (clocks drift, paths change).
    if (rtt <= this.bestRtt * 1.5 || !this.known) {
      this.bestRtt = Math.min(this.bestRtt * 1.05, rtt);
      this.offset = hubT - (sent + recv) / 2;
      this.known = true;
    }
    this._applyBound();
  }
  /** A message stamped with hub time `hubT` arrived at local time `recv`. */
  observe(hubT, recv = localNow()) {
    if (typeof hubT !== "number" || !isFinite(hubT)) return;
    const bound = hubT - recv;
    if (!this.known) {
      // No pong yet: assume the message took no time to arrive.
      this.offset = bound;
      this.known = true;
      this.lowerBound = bound;
      return;
    }
    if (bound > this.lowerBound) this.lowerBound = bound;
    this._applyBound();
  }
  _applyBound() {
    if (this.offset < this.lowerBound) this.offset = this.lowerBound;
  }
  /** The hub's time now, estimated. */
  now() {
    return localNow() + this.offset;
  }
}

/**
 * Exponential backoff with jitter: base * 2^attempt capped at `cap`, then a random
 * value in [delay/2, delay] ("equal jitter") so that a restarted hub is not hit by
 * every client at once.
 */
export function backoffDelay(attempt, { base = 500, cap = 10000, random = Math.random } = {}) {
  const d = Math.min(cap, base * Math.pow(2, Math.max(0, attempt)));
  return d / 2 + random() * (d / 2);
}

function withToken(url, token) {
  if (!token) return url;
  const sep = url.includes("?") ? "&" : "?";
  return `${url}${sep}token=${encodeURIComponent(token)}`;
}

/**
 * A connection to a hub that reconnects by itself and keeps its subscriptions and
 * viewport across reconnects.
 */
export class TrackHubClient {
  /**
   * @param {string} url  ws:// or wss:// URL of `/v1/ws`
   * @param {object} [opts]
   * @param {string} [opts.token]        JWT, sent as `?token=` on the upgrade URL
   * @param {(state:string, info:object)=>void} [opts.onState]  `connecting` | `open` | `closed`
   * @param {(msg:object)=>void} [opts.onMessage]  every server message (after dispatch)
   * @param {(err:object)=>void} [opts.onError]    `error` messages without a pending request
   * @param {number} [opts.pingIntervalMs=15000]
   * @param {number} [opts.backoffBaseMs=500]
   * @param {number} [opts.backoffCapMs=10000]
   * @param {number} [opts.requestTimeoutMs=15000]
   * @param {typeof WebSocket} [opts.WebSocketImpl]
   */
  constructor(url, opts = {}) {
    this.url = url;
    this.token = opts.token || null;
    this.opts = opts;
    this.onState = opts.onState || (() => {});
    this.state = "closed";
    this.clock = new HubClock();
    this.session = null;
    this.welcome = null;
    this._ws = null;
    this._nextId = 1;
    this._pending = new Map();     // id -> {resolve, reject, timer, op}
    this._subs = new Map();        // trip -> {mode, handlers, lastEvent, snapshotSeen}
    this._viewport = null;         // {bbox, zoom, onClusters}
    this._attempt = 0;
    this._retryTimer = null;
    this._pingTimer = null;
    this._closedByUser = false;
    this._WS = opts.WebSocketImpl || (typeof WebSocket !== "undefined" ? WebSocket : null);
    if (!this._WS) throw new Error("no WebSocket implementation available");
  }

  // ---- connection ---------------------------------------------------------

  /** Opens the connection (called by `connect()`); reconnects until `close()`. */
  open() {
    this._closedByUser = false;
    this._dial();
    return this;
  }

  /** Closes for good: no more reconnects. */
  close() {
    this._closedByUser = true;
    clearTimeout(this._retryTimer);
    this._stopPing();
    if (this._ws) {
      try { this._ws.close(1000, "bye"); } catch (_) { /* ignore */ }
    }
    this._setState("closed", { final: true });
  }

  /** Sets a new token; sent as `hello` now if open, and used on later reconnects. */
  setToken(token) {
    this.token = token;
    if (this.state === "open") return this.request("hello", { token });
    return Promise.resolve(null);
  }

  _setState(state, info = {}) {
    if (this.state === state && !info.force) return;
    this.state = state;
    try { this.onState(state, info); } catch (e) { console.error(e); }
  }

  _dial() {
    clearTimeout(this._retryTimer);
    this._setState("connecting", { attempt: this._attempt });
    let ws;
    try {
      ws = new this._WS(withToken(this.url, this.token), PROTOCOL);
    } catch (e) {
      this._scheduleReconnect();
      return;
    }
    this._ws = ws;
    ws.onopen = () => {
      if (this._ws !== ws) return;
      this._attempt = 0;
      this._setState("open");
      this._startPing();
      this.ping().catch(() => {});
      this._resubscribeAll();
    };
    ws.onmessage = (ev) => {
      if (this._ws !== ws) return;
      this._onMessage(ev.data);
    };
    ws.onclose = (ev) => {
      if (this._ws !== ws) return;
      this._ws = null;
      this._stopPing();
      this._failPending(new Error(`connection closed (${ev && ev.code})`));
      if (this._closedByUser) {
        this._setState("closed", { final: true });
        return;
      }
      this._setState("closed", { code: ev && ev.code, reason: ev && ev.reason });
      this._scheduleReconnect();
    };
    ws.onerror = () => { /* onclose follows */ };
  }

  _scheduleReconnect() {
    if (this._closedByUser) return;
    const delay = backoffDelay(this._attempt, {
      base: this.opts.backoffBaseMs ?? 500,
      cap: this.opts.backoffCapMs ?? 10000,
    });
    this._attempt += 1;
    clearTimeout(this._retryTimer);
    this._retryTimer = setTimeout(() => this._dial(), delay);
  }

  _startPing() {
    this._stopPing();
    const every = this.opts.pingIntervalMs ?? 15000;
    this._pingTimer = setInterval(() => { this.ping().catch(() => {}); }, every);
  }

  _stopPing() {
    clearInterval(this._pingTimer);
    this._pingTimer = null;
  }

  _failPending(err) {
    for (const [, p] of this._pending) {
      clearTimeout(p.timer);
      p.reject(err);
    }
    this._pending.clear();
  }

  // ---- requests -------------------------------------------------------------

  /** Sends a raw message (adds nothing). Returns false when not open. */
  send(msg) {
    if (!this._ws || this._ws.readyState !== 1) return false;
    this._ws.send(JSON.stringify(msg));
    return true;
  }

  /**
   * Sends `op` with a fresh request id; resolves with the reply carrying it as `re`
   * (rejects on an `error` reply, with `.code`, or on timeout / disconnect).
   */
  request(op, fields = {}) {
    const id = this._nextId++;
    const msg = { op, id, ...fields };
    return new Promise((resolve, reject) => {
      if (!this.send(msg)) {
        reject(new Error("not connected"));
        return;
      }
      const timer = setTimeout(() => {
        this._pending.delete(id);
        reject(new Error(`${op} timed out`));
      }, this.opts.requestTimeoutMs ?? 15000);
      this._pending.set(id, { resolve, reject, timer, op, sentAt: localNow() });
    });
  }

  /** `ping`; resolves with the hub time and feeds the clock estimate. */
  ping() {
    const sent = localNow();
    return this.request("ping").then((pong) => {
      this.clock.samplePong(pong.t, sent, localNow());
      return pong.t;
    });
  }

  /** The hub's time now, estimated from pongs and message times. */
  hubNow() {
    return this.clock.now();
  }

  // ---- subscriptions --------------------------------------------------------

  /**
   * Follows a trip. Handlers: onSnapshot(snapshot), onSegment(segment),
   * onFrame(frame), onEvent(event, {replayed}), onStop(msg) (a link for one stop's
   * `stop` messages, PROTOCOL 17), onUnsubscribed(msg), onError(err).
   * Survives reconnects: it subscribes again with `since_event` = the last event
   * `n` seen, so missed events are replayed (each event is delivered once).
   * @returns {{unsubscribe: () => Promise<any>}}
   */
  subscribe(trip, { mode = "frames", onSnapshot, onSegment, onFrame, onEvent, onStop, onUnsubscribed, onError } = {}) {
    const existing = this._subs.get(trip);
    const sub = {
      trip,
      mode,
      handlers: { onSnapshot, onSegment, onFrame, onEvent, onStop, onUnsubscribed, onError },
      lastEvent: existing ? existing.lastEvent : null,
      // an event whose `n` is at most lastEvent was already seen
    };
    this._subs.set(trip, sub);
    if (this.state === "open") this._sendSubscribe(sub);
    return { unsubscribe: () => this.unsubscribe(trip) };
  }

  /** Stops following a trip; resolves with `unsubscribed` (or null when offline). */
  unsubscribe(trip) {
    this._subs.delete(trip);
    if (this.state !== "open") return Promise.resolve(null);
    return this.request("unsubscribe", { trip }).catch(() => null);
  }

  _sendSubscribe(sub) {
    const fields = { trip: sub.trip, mode: sub.mode };
    if (sub.lastEvent !== null && sub.lastEvent !== undefined) fields.since_event = sub.lastEvent;
    this.request("subscribe", fields).catch((err) => {
      if (this._subs.get(sub.trip) !== sub) return;
      if (sub.handlers.onError) sub.handlers.onError(err);
      else if (this.opts.onError) this.opts.onError(err);
    });
    // The snapshot itself is dispatched by type in _onMessage.
  }

  /**
   * Watches the fleet: `bbox` [west, south, east, north] (or null to stop) at `zoom`.
   * `onClusters(msg)` gets the first answer and every change. Kept across reconnects.
   * @returns {Promise<object|null>} the first `clusters` message
   */
  viewport(bbox, zoom, onClusters) {
    if (bbox === null) {
      this._viewport = null;
      this.send({ op: "viewport", bbox: null, zoom: 0 });
      return Promise.resolve(null);
    }
    this._viewport = { bbox, zoom, onClusters: onClusters || (this._viewport && this._viewport.onClusters) };
    if (this.state !== "open") return Promise.resolve(null);
    return this.request("viewport", { bbox, zoom }).catch((err) => {
      if (this.opts.onError) this.opts.onError(err);
      return null;
    });
  }

  _resubscribeAll() {
    for (const sub of this._subs.values()) this._sendSubscribe(sub);
    if (this._viewport) {
      const { bbox, zoom } = this._viewport;
      this.request("viewport", { bbox, zoom }).catch(() => {});
    }
  }

  // ---- dispatch -------------------------------------------------------------

  _onMessage(data) {
    const recv = localNow();
    let msg;
    try { msg = JSON.parse(data); } catch (_) { return; }
    if (!msg || typeof msg !== "object") return;

    if (typeof msg.t === "number") this.clock.observe(msg.t, recv);
    else if (typeof msg.t0 === "number") this.clock.observe(msg.t0, recv);

    if (msg.re !== undefined && this._pending.has(msg.re)) {
      const p = this._pending.get(msg.re);
      this._pending.delete(msg.re);
      clearTimeout(p.timer);
      if (msg.type === "error") {
        const err = new Error(msg.message || msg.code);
        err.code = msg.code;
        err.op = p.op;
        p.reject(err);
      } else {
        p.resolve(msg);
      }
    } else if (msg.type === "error" && this.opts.onError) {
      this.opts.onError(msg);
    }

    switch (msg.type) {
      case "welcome":
        this.welcome = msg;
        this.session = msg.session;
        break;
      case "snapshot": {
        const sub = this._subs.get(msg.trip);
        if (!sub) break;
        // With `recovered: true` the events after our `since_event` follow (replayed);
        // otherwise (first subscribe, or nothing to replay) start counting from here.
        if (msg.recovered !== true && typeof msg.last_event === "number") sub.lastEvent = msg.last_event;
        sub.replaying = msg.recovered === true;
        sub.snapshotLastEvent = msg.last_event;
        call(sub.handlers.onSnapshot, msg);
        break;
      }
      case "segment": {
        const sub = this._subs.get(msg.trip);
        if (sub) call(sub.handlers.onSegment, msg);
        break;
      }
      case "frame": {
        const sub = this._subs.get(msg.trip);
        if (sub) call(sub.handlers.onFrame, msg);
        break;
      }
      case "event": {
        const sub = this._subs.get(msg.trip);
        if (!sub) break;
        if (typeof msg.n === "number" && sub.lastEvent !== null && sub.lastEvent !== undefined && msg.n <= sub.lastEvent) break;
        if (typeof msg.n === "number") sub.lastEvent = msg.n;
        const replayed = !!(sub.replaying && typeof sub.snapshotLastEvent === "number" && msg.n <= sub.snapshotLastEvent);
        call(sub.handlers.onEvent, msg, { replayed });
        break;
      }
      case "stop": {
        // How many stops lie before a stop link's own, its ETA, whether the courier is shown.
        const sub = this._subs.get(msg.trip);
        if (sub) call(sub.handlers.onStop, msg);
        break;
      }
      case "unsubscribed": {
        const sub = this._subs.get(msg.trip);
        if (sub && msg.reason) {
          this._subs.delete(msg.trip);
          call(sub.handlers.onUnsubscribed, msg);
        }
        break;
      }
      case "clusters":
        if (this._viewport && this._viewport.onClusters) call(this._viewport.onClusters, msg);
        break;
      default:
        break;
    }
    if (this.opts.onMessage) call(this.opts.onMessage, msg);
  }
}

function call(fn, ...args) {
  if (typeof fn !== "function") return;
  try { fn(...args); } catch (e) { console.error(e); }
}

/**
 * Opens a reconnecting connection to a hub.
 * @param {string} url ws(s)://host/v1/ws
 * @param {object} [opts] see TrackHubClient
 */
export function connect(url, opts = {}) {
  return new TrackHubClient(url, opts).open();
}

/** The `/v1/ws` URL of the hub that served the current page (ws: or wss:). */
export function pageHubUrl(loc = (typeof location !== "undefined" ? location : null)) {
  if (!loc) throw new Error("no location");
  const scheme = loc.protocol === "https:" ? "wss:" : "ws:";
  return `${scheme}//${loc.host}/v1/ws`;
}
