// TrackHub web client: a single-page app routed on location.pathname.
//   /             trips list (trips-list.js)
//   /trips/{id}   one trip   (trip-view.js)
//   /fleet        the fleet  (fleet-view.js)

import { h, pageLink } from "./util.js";

function route(pathname) {
  const path = pathname.replace(/\/+$/, "") || "/";
  if (path === "/" || path === "/index.html") return { view: "trips" };
  if (path === "/fleet") return { view: "fleet" };
  const m = path.match(/^\/trips\/([^/]+)$/);
  if (m) {
    let id;
    try { id = decodeURIComponent(m[1]); } catch (_) { id = m[1]; }
    return { view: "trip", id };
  }
  return { view: "notfound" };
}

function markNav(view) {
  for (const a of document.querySelectorAll(".topnav a, .brand")) {
    a.href = pageLink(a.dataset.nav);
    const current = (a.dataset.nav === "/" && (view === "trips" || view === "trip")) || (a.dataset.nav === "/fleet" && view === "fleet");
    if (a.closest(".topnav")) {
      if (current) a.setAttribute("aria-current", "page"); else a.removeAttribute("aria-current");
    }
  }
}

async function main() {
  const main = document.getElementById("main");
  const r = route(location.pathname);
  markNav(r.view);
  document.body.dataset.view = r.view;
  if (typeof L === "undefined" && (r.view === "trip" || r.view === "fleet")) {
    main.replaceChildren(h("p", { class: "notice" }, "The map library did not load (/vendor/leaflet/leaflet.js)."));
    return;
  }
  switch (r.view) {
    case "trips": {
      const { mountTripsList } = await import("./trips-list.js");
      mountTripsList(main);
      break;
    }
    case "trip": {
      const { mountTripView } = await import("./trip-view.js");
      mountTripView(main, r.id);
      break;
    }
    case "fleet": {
      const { mountFleetView } = await import("./fleet-view.js");
      mountFleetView(main);
      break;
    }
    default:
      document.title = "Not found · TrackHub";
      main.replaceChildren(h("section", { class: "card empty" },
        h("h1", {}, "Page not found"),
        h("p", {}, h("a", { href: pageLink("/") }, "See the trips"))));
  }
}

main().catch((e) => {
  console.error(e);
  document.getElementById("main").replaceChildren(h("p", { class: "notice error" }, `Something went wrong: ${e.message}`));
});
