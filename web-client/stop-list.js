// The trip view's list of stops (PROTOCOL 17): each stop's name (its id when it has none),
// its ETA and distance, visited ones struck through, and a control that creates that stop's
// customer link (POST /v1/trips/{id}/share {stop, visible_within_stops}) and shows it, to
// open or to copy and send. The list is rebuilt only when a stop or a link changes, not on
// every segment, so a control is never replaced under the dispatcher's pointer.

import { h, formatDistance, postJSON } from "./util.js";

/** How many stops before a customer's the courier is shown on their link (PROTOCOL 17). */
export const LINK_VISIBLE_WITHIN_STOPS = 1;

/** A stop's ETA in words: "4 min · 1.2 km" ("—" when the hub has none yet). */
export function stopEtaText(etaS, remainingM) {
  if (etaS === null || etaS === undefined) return "—";
  const min = Math.max(1, Math.ceil(etaS / 60));
  const time = min >= 60 ? `${Math.floor(min / 60)} h${min % 60 ? ` ${min % 60} min` : ""}` : `${min} min`;
  return remainingM === null || remainingM === undefined ? time : `${time} · ${formatDistance(remainingM)}`;
}

/**
 * The list element (`el`) and its rows. `render(rows)` takes, in order, one object per stop:
 * `{id, index, num, name, visited, here, etaS, remainingM}` (`id` null: a waypoint without
 * an id, which has no link; "destination" for the trip's destination).
 */
export class StopList {
  constructor(tripId) {
    this.tripId = tripId;
    this.el = h("ol", { class: "stops", "aria-label": "Stops", "data-testid": "stops", hidden: true });
    /** Links made on this page, by stop id: {pending}, {url} or {error}. */
    this.links = new Map();
    this.rows = [];
    this.shape = null;
    this.etaEls = [];
    /** The stop whose link is being made from its control: the keyboard goes to the link. */
    this.focusStop = null;
  }

  render(rows) {
    this.rows = rows;
    const shape = JSON.stringify(rows.map((r) => [r.id, r.index, r.num, r.name, r.visited, r.here, this.links.get(r.id) || null]));
    if (shape !== this.shape) {
      this.shape = shape;
      this.build();
    }
    rows.forEach((r, i) => this.fillEta(this.etaEls[i], r));
    this.el.hidden = rows.length === 0;
  }

  build() {
    const inside = document.activeElement && this.el.contains(document.activeElement);
    const focusStop = inside ? document.activeElement.closest("li").dataset.stop : this.focusStop;
    this.etaEls = [];
    this.el.replaceChildren(...this.rows.map((r) => {
      const eta = h("span", { class: "stop-eta", "data-testid": "stop-eta" });
      this.etaEls.push(eta);
      const li = h("li", {
        class: r.here ? "current" : r.visited ? "visited" : "",
        "data-testid": "stop-row",
        "data-stop": r.id === null ? "" : r.id,
        "data-index": r.index === null ? "" : String(r.index),
        "data-visited": r.visited ? "true" : "false",
      },
      h("span", { class: "stop-num", "aria-hidden": "true" }, r.num),
      h("span", { class: "stop-text" }, h("span", { class: "stop-name" }, r.name), eta),
      this.control(r));
      return li;
    }));
    // Keep the keyboard where it was: on the new link once it is made, else the same control.
    if (focusStop !== null) {
      const li = this.el.querySelector(`li[data-stop="${CSS.escape(focusStop)}"]`);
      const target = li && (li.querySelector("[data-testid='stop-link']") || li.querySelector("button"));
      if (target) target.focus();
    }
  }

  fillEta(el, r) {
    if (!el) return;
    const words = r.here ? "the rider is here" : r.visited ? "visited" : stopEtaText(r.etaS, r.remainingM);
    if (el.textContent !== words) el.textContent = words;
    el.dataset.etaS = !r.visited && typeof r.etaS === "number" ? String(r.etaS) : "";
  }

  /** The stop's link control: "Link" to make it; then "Open" and "Copy"; nothing for a stop
   *  without an id or one the courier has been to (its link would end at once). */
  control(r) {
    if (r.id === null || r.visited) return null;
    const link = this.links.get(r.id);
    if (link && link.url) {
      const copy = h("button", { type: "button", class: "stop-btn", "data-testid": "stop-link-copy", "aria-label": `Copy the customer link for ${r.name}` }, "Copy");
      copy.addEventListener("click", () => this.copy(link.url, copy));
      return h("span", { class: "stop-actions" },
        h("a", { class: "stop-btn", "data-testid": "stop-link", href: link.url, target: "_blank", rel: "noopener noreferrer",
          title: link.url, "aria-label": `Open the customer page for ${r.name}` }, "Open ↗"),
        copy);
    }
    const button = h("button", {
      type: "button", class: "stop-btn", "data-testid": "stop-share", disabled: link && link.pending ? true : null,
      "aria-label": `Make the customer link for ${r.name}`,
    }, link && link.pending ? "…" : "Link");
    button.addEventListener("click", () => this.makeLink(r.id));
    const error = link && link.error ? h("span", { class: "stop-link-error", role: "alert" }, link.error) : null;
    return h("span", { class: "stop-actions" }, button, error);
  }

  async makeLink(id) {
    this.focusStop = id;
    this.links.set(id, { pending: true });
    this.render(this.rows);
    try {
      const answer = await postJSON(`/v1/trips/${encodeURIComponent(this.tripId)}/share`, { stop: id, visible_within_stops: LINK_VISIBLE_WITHIN_STOPS });
      this.links.set(id, { url: new URL(answer.url, location.origin).href });
    } catch (e) {
      // 403 without an admin token, 409 on an open hub (share links need a secured hub).
      this.links.set(id, { error: e.status === 403 || e.status === 401 ? "Needs an admin token" : e.message });
    }
    this.render(this.rows);
    this.focusStop = null;
  }

  async copy(url, button) {
    try {
      await navigator.clipboard.writeText(url);
      button.textContent = "Copied";
    } catch (_) {
      // No clipboard (an insecure origin, or refused): the link's title shows the URL.
      button.textContent = "Copy failed";
    }
  }
}
