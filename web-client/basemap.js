// The vector basemap: when map tiles cannot load (offline, a tile server down, or
// ?tiles=none), the sample road network the project ships for the simulator is drawn as
// light grey lines under the routes, riders and fleet bubbles, so the map still shows
// streets. The roads are /basemap.json (made by scripts/make_basemap.py from
// data/samples/), fetched from the hub only when the basemap is needed.
//
// The lines are drawn on canvas tiles of a Leaflet GridLayer in the tile pane: the map's
// own projection and tile grid, tiles drawn once and kept while in view (a pan draws only
// the tiles it uncovers, an animation frame draws nothing), and each tile draws only the
// lines whose bounding box meets it.
//
// ?basemap=vector shows it even over working tiles; ?basemap=none never shows it.
// The page exposes its state on the map element (data-basemap: "off", "loading",
// "vector" or "unavailable") and as window.trackhubBasemap (for the browser tests).

export const BASEMAP_URL = "/basemap.json";

/** Constant markup for Leaflet's attribution control (data/samples/README.md: ODbL). */
export const BASEMAP_CREDIT = '<span data-testid="basemap-credit">Streets: sample roads © '
  + '<a href="https://www.openstreetmap.org/copyright">OpenStreetMap</a> contributors (ODbL)</span>';

/** Below this zoom the sample areas are a few pixels wide: nothing is drawn. */
export const MIN_ZOOM = 10;

/** Line styles by road class, drawn in this order (later on top); unknown classes are streets. */
const STYLES = [
  { cls: "street", color: "#c4ccd8", width: (z) => clamp(0.5 + (z - 12) * 0.75, 0.6, 7) },
  { cls: "major", color: "#b0b9c7", width: (z) => clamp(1.5 + (z - 10) * 0.9, 1.5, 12) },
];

function clamp(x, lo, hi) {
  return Math.max(lo, Math.min(hi, x));
}

/** "vector" (always), "none" (never) or "auto" (when tiles fail) from ?basemap=. */
export function basemapMode(params) {
  const v = (params.get("basemap") || "").toLowerCase();
  return v === "vector" || v === "none" ? v : "auto";
}

/**
 * Lines of a GeoJSON FeatureCollection of LineStrings and MultiLineStrings, each with its
 * class (`properties.class`, else `highway`, else "street") and its bounding box:
 * [{cls, points: [[lon, lat], …], bbox: [west, south, east, north]}].
 */
export function parseBasemap(geojson) {
  const out = [];
  for (const f of (geojson && geojson.features) || []) {
    const g = f && f.geometry;
    if (!g) continue;
    const props = f.properties || {};
    const cls = String(props.class || props.highway || "street");
    const parts = g.type === "LineString" ? [g.coordinates] : g.type === "MultiLineString" ? g.coordinates : [];
    for (const points of parts) {
      if (!Array.isArray(points) || points.length < 2) continue;
      let w = Infinity, s = Infinity, e = -Infinity, n = -Infinity;
      for (const p of points) {
        if (p[0] < w) w = p[0];
        if (p[0] > e) e = p[0];
        if (p[1] < s) s = p[1];
        if (p[1] > n) n = p[1];
      }
      out.push({ cls, points, bbox: [w, s, e, n] });
    }
  }
  return out;
}

/** The lines whose bounding box meets bbox [west, south, east, north]. */
export function linesIn(lines, bbox) {
  const [w, s, e, n] = bbox;
  return lines.filter((l) => l.bbox[0] <= e && l.bbox[2] >= w && l.bbox[1] <= n && l.bbox[3] >= s);
}

/**
 * Whether the tiles work, from the tile layer's events: feed it "loading" (a new view's
 * tiles start), "tileload", "tileerror" and "load" (all of the view's tiles settled). It
 * answers "show" once a tile fails while none of the view has loaded, and when a view's
 * tiles all failed; "hide" when a view's tiles all loaded; otherwise null (a view with
 * some tiles of each keeps the current choice, so a flaky server does not flicker).
 */
export class TileHealth {
  constructor() {
    this.ok = 0;
    this.failed = 0;
    this.totalOk = 0;
    this.totalFailed = 0;
    this.settled = 0;
  }

  event(type) {
    switch (type) {
      case "loading":
        this.ok = 0;
        this.failed = 0;
        return null;
      case "tileload":
        this.ok++;
        this.totalOk++;
        return null;
      case "tileerror":
        this.failed++;
        this.totalFailed++;
        return this.ok === 0 ? "show" : null;
      case "load": {
        this.settled++;
        const verdict = this.failed > 0 && this.ok === 0 ? "show" : this.ok > 0 && this.failed === 0 ? "hide" : null;
        this.ok = 0;
        this.failed = 0;
        return verdict;
      }
      default:
        return null;
    }
  }
}

let roadsPromise = null;
/** The roads, fetched once per page. */
function loadRoads() {
  if (!roadsPromise) {
    roadsPromise = fetch(BASEMAP_URL, { headers: { Accept: "application/json" } })
      .then((res) => {
        if (!res.ok) throw new Error(`${BASEMAP_URL}: HTTP ${res.status}`);
        return res.json();
      })
      .then(parseBasemap);
  }
  return roadsPromise;
}

/** A GridLayer whose tiles are canvases with the roads that cross them. */
function makeRoadLayer(lines, stats) {
  const byClass = new Map(STYLES.map((s) => [s.cls, []]));
  for (const l of lines) (byClass.get(l.cls) || byClass.get("street")).push(l);
  // The bbox of everything: most tiles of the world are outside it and cost one test.
  const extent = lines.reduce((b, l) => [Math.min(b[0], l.bbox[0]), Math.min(b[1], l.bbox[1]),
    Math.max(b[2], l.bbox[2]), Math.max(b[3], l.bbox[3])], [Infinity, Infinity, -Infinity, -Infinity]);

  const Layer = L.GridLayer.extend({
    createTile(coords) {
      const size = this.getTileSize();
      const ratio = Math.min(2, window.devicePixelRatio || 1);
      const tile = document.createElement("canvas");
      tile.width = Math.round(size.x * ratio);
      tile.height = Math.round(size.y * ratio);
      tile.setAttribute("data-testid", "basemap-tile");
      const map = this._map;
      const z = coords.z;
      const origin = coords.scaleBy(size);
      // The tile's bbox, widened by the widest line so a line just outside still shows its edge.
      const pad = Math.max(...STYLES.map((s) => s.width(z)));
      const nw = map.unproject(origin.subtract([pad, pad]), z);
      const se = map.unproject(origin.add(size).add([pad, pad]), z);
      const bbox = [nw.lng, se.lat, se.lng, nw.lat];
      let drawn = 0;
      if (bbox[0] <= extent[2] && bbox[2] >= extent[0] && bbox[1] <= extent[3] && bbox[3] >= extent[1]) {
        const ctx = tile.getContext("2d");
        ctx.scale(ratio, ratio);
        ctx.lineCap = "round";
        ctx.lineJoin = "round";
        for (const style of STYLES) {
          const here = linesIn(byClass.get(style.cls), bbox);
          if (here.length === 0) continue;
          ctx.beginPath();
          for (const line of here) {
            line.points.forEach((p, i) => {
              const q = map.project([p[1], p[0]], z);
              if (i === 0) ctx.moveTo(q.x - origin.x, q.y - origin.y);
              else ctx.lineTo(q.x - origin.x, q.y - origin.y);
            });
          }
          ctx.strokeStyle = style.color;
          ctx.lineWidth = style.width(z);
          ctx.stroke();
          drawn += here.length;
        }
      }
      tile.setAttribute("data-lines", String(drawn));
      tile.setAttribute("data-z", String(z));
      stats.tilesDrawn++;
      stats.linesDrawn += drawn;
      return tile;
    },
  });
  return new Layer({ minZoom: MIN_ZOOM, zIndex: 2, className: "basemap-layer", attribution: BASEMAP_CREDIT, updateWhenZooming: false });
}

/**
 * Shows the vector basemap on `map` when it is needed: at once with mode "vector" or
 * when there is no `tileLayer` ("none" tiles), never with mode "none", and in "auto" mode
 * when the tile layer's tiles fail (TileHealth), and off again when they load. Its credit
 * joins the attribution control while it is on (the tile layer keeps its own).
 */
export function attachBasemap(map, { tileLayer = null, mode = "auto" } = {}) {
  const el = map.getContainer();
  const stats = {
    state: "off", reason: null, lines: 0, tilesDrawn: 0, linesDrawn: 0, tiles: null, moving: false,
    /** The zoom the map shows now. */
    zoom: () => map.getZoom(),
    /** Where [lon, lat] is on the screen now (viewport pixels), to find a road's pixels. */
    toScreen(lon, lat) {
      const p = map.latLngToContainerPoint([lat, lon]);
      const r = el.getBoundingClientRect();
      return [r.left + p.x, r.top + p.y];
    },
  };
  window.trackhubBasemap = stats;
  map.on("movestart zoomstart", () => { stats.moving = true; });
  map.on("moveend", () => { stats.moving = false; });
  el.dataset.basemap = "off";
  let layer = null;
  let wanted = false;

  function setState(state) {
    stats.state = state;
    el.dataset.basemap = state;
  }

  function show(reason) {
    if (wanted) return;
    wanted = true;
    stats.reason = reason;
    setState("loading");
    loadRoads().then((lines) => {
      stats.lines = lines.length;
      if (!wanted) return;
      if (!layer) layer = makeRoadLayer(lines, stats);
      layer.addTo(map);
      setState("vector");
    }).catch((e) => {
      console.warn("basemap", e);
      if (wanted) setState("unavailable");
    });
  }

  function hide() {
    if (!wanted) return;
    wanted = false;
    stats.reason = null;
    if (layer) layer.remove();
    setState("off");
  }

  if (mode === "none") return { show() {}, hide() {}, stats };
  if (mode === "vector") show("forced");
  else if (!tileLayer) show("no-tiles");
  else {
    const health = new TileHealth();
    stats.tiles = health;
    tileLayer.on("loading tileload tileerror load", (e) => {
      const verdict = health.event(e.type);
      if (verdict === "show") show("tiles-failing");
      else if (verdict === "hide") hide();
    });
  }
  return { show, hide, stats };
}
