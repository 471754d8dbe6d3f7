#!/usr/bin/env python3
"""Turn a GeoJSON road network into OpenStreetMap XML, for `trackhub router build`.

    python3 scripts/geojson_to_osm.py data/samples/roads_helsinki.geojson roads.osm

Routino's planetsplitter reads OpenStreetMap data, and the project ships its roads as
GeoJSON edges (data/samples/roads_helsinki.geojson: LineStrings from `u_node` to
`v_node`, OSM node ids, and `oneway`). Each edge becomes one way: its end points keep
their OSM node ids, so edges that meet at a junction share a node and the graph stays
connected; its inner points get fresh ids above every id in the input. A way carries
`highway` (the edge's own, else `unclassified`, which every mode may use) and
`oneway=yes` when the edge is one-way (`yes`/true: only from `u_node` to `v_node`, the
geometry's direction). Standard library only; the same input gives the same bytes.
The data stays under the ODbL: the output keeps the input's attribution.
"""

import json
import sys
from xml.sax.saxutils import quoteattr

DEFAULT_HIGHWAY = "unclassified"


def is_oneway(value):
    """The OSM `oneway` tag or a boolean: true for `yes`, `true`, `1` or True."""
    if isinstance(value, bool):
        return value
    return str(value or "").strip().lower() in ("yes", "true", "1")


def convert(features):
    """Returns (nodes, ways): nodes as {id: (lat, lon)}, ways as [(id, [node ids], tags)]."""
    endpoint_ids = []
    for feature in features:
        props = feature.get("properties") or {}
        for key in ("u_node", "v_node"):
            if props.get(key) is not None:
                endpoint_ids.append(int(props[key]))
    next_id = max(endpoint_ids, default=0) + 1
    nodes = {}
    ways = []
    for way_id, feature in enumerate(features, start=1):
        geometry = feature.get("geometry") or {}
        if geometry.get("type") != "LineString":
            continue
        coords = geometry.get("coordinates") or []
        if len(coords) < 2:
            continue
        props = feature.get("properties") or {}
        refs = []
        for i, (lon, lat) in enumerate(coords):
            if i == 0 and props.get("u_node") is not None:
                node_id = int(props["u_node"])
            elif i == len(coords) - 1 and props.get("v_node") is not None:
                node_id = int(props["v_node"])
            else:
                node_id = next_id
                next_id += 1
            nodes.setdefault(node_id, (lat, lon))
            refs.append(node_id)
        tags = {"highway": props.get("highway") or DEFAULT_HIGHWAY}
        if is_oneway(props.get("oneway")):
            tags["oneway"] = "yes"
        if props.get("name"):
            tags["name"] = str(props["name"])
        ways.append((way_id, refs, tags))
    return nodes, ways


def write_osm(nodes, ways, out, attribution=None):
    out.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    out.write('<osm version="0.6" generator="trackhub geojson_to_osm.py">\n')
    if attribution:
        out.write("<!-- %s -->\n" % attribution.replace("--", "-"))
    for node_id in sorted(nodes):
        lat, lon = nodes[node_id]
        out.write('  <node id="%d" version="1" lat="%.7f" lon="%.7f"/>\n' % (node_id, lat, lon))
    for way_id, refs, tags in ways:
        out.write('  <way id="%d" version="1">\n' % way_id)
        for ref in refs:
            out.write('    <nd ref="%d"/>\n' % ref)
        for key in sorted(tags):
            out.write("    <tag k=%s v=%s/>\n" % (quoteattr(key), quoteattr(tags[key])))
        out.write("  </way>\n")
    out.write("</osm>\n")


def main(argv):
    if len(argv) != 3:
        sys.stderr.write("usage: geojson_to_osm.py ROADS.geojson OUT.osm\n")
        return 2
    with open(argv[1], encoding="utf-8") as f:
        collection = json.load(f)
    nodes, ways = convert(collection.get("features") or [])
    with open(argv[2], "w", encoding="utf-8") as out:
        write_osm(nodes, ways, out, collection.get("attribution"))
    print("%d nodes, %d ways -> %s" % (len(nodes), len(ways), argv[2]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
