import TrackHubCore

/// Encoders for the fleet channel (PROTOCOL sections 4 and 8): the `clusters` message, the
/// body of `GET /v1/fleet/clusters`, and the part of an answer that decides whether it changed.
///
/// An item is `{id, lat, lon, count}`, then `trip`, `status`, `bearing` (degrees, 0.1) and
/// `stale` (PROTOCOL 18) for a single rider or `bounds` `[west, south, east, north]` and `expansion_zoom` for a cluster.
/// Coordinates have 7 decimals.
public enum FleetMessages {
    /// `clusters` `{type, re?, t, zoom, bbox, total, truncated, items}`.
    /// - Parameters:
    ///   - re: the `viewport`'s id for its first answer; nil for the updates of a fleet tick.
    ///   - t: the fleet tick's time, ms since the epoch.
    ///   - viewport: the viewport as normalised (its `zoom` and `bbox` are echoed).
    ///   - total: the whole fleet's size.
    ///   - truncated: true when items were left out past `--max-items`.
    ///   - items: the items to send, highest counts first.
    ///   - headroom: leading bytes left before the JSON.
    public static func clusters(
        re: MessageID?, t: Int64, viewport: Viewport, total: Int, truncated: Bool, items: [FleetItem], headroom: Int = 0
    ) -> [UInt8] {
        var w = JSONWriter(headroom: headroom, capacity: 128 + items.count * 96)
        w.beginObject()
        w.field("type", "clusters")
        w.reField(re)
        w.field("t", t)
        writeViewportAndContent(&w, viewport: viewport, total: total, truncated: truncated, items: items)
        w.endObject()
        return w.finish()
    }

    /// The body of `GET /v1/fleet/clusters`: a `clusters` message's fields without `type`
    /// (and without `re`). Parameters as for `clusters`.
    public static func clustersBody(t: Int64, viewport: Viewport, total: Int, truncated: Bool, items: [FleetItem]) -> [UInt8] {
        var w = JSONWriter(headroom: 0, capacity: 128 + items.count * 96)
        w.beginObject()
        w.field("t", t)
        writeViewportAndContent(&w, viewport: viewport, total: total, truncated: truncated, items: items)
        w.endObject()
        return w.finish()
    }

    /// `{total, truncated, items}`: what decides whether a viewport's answer changed
    /// (PROTOCOL 8; `zoom` and `bbox` are the viewport's key, `t` changes every tick).
    /// Compared, never sent.
    public static func clustersContent(total: Int, truncated: Bool, items: [FleetItem]) -> [UInt8] {
        var w = JSONWriter(headroom: 0, capacity: 64 + items.count * 96)
        w.beginObject()
        w.field("total", total)
        w.field("truncated", truncated)
        writeItems(&w, items)
        w.endObject()
        return w.finish()
    }

    private static func writeViewportAndContent(
        _ w: inout JSONWriter, viewport: Viewport, total: Int, truncated: Bool, items: [FleetItem]
    ) {
        w.field("zoom", viewport.zoom)
        w.key("bbox")
        w.beginArray()
        for value in viewport.bbox { w.coordinate(value) }
        w.endArray()
        w.field("total", total)
        w.field("truncated", truncated)
        writeItems(&w, items)
    }

    private static func writeItems(_ w: inout JSONWriter, _ items: [FleetItem]) {
        w.key("items")
        w.beginArray()
        for item in items {
            w.beginObject()
            w.key("id")
            if let key = item.clusterKey { w.hexString(prefix: UInt8(ascii: "#"), key) } else { w.string(item.id) }
            w.coordinateField("lat", item.lat)
            w.coordinateField("lon", item.lon)
            w.field("count", item.count)
            if item.count == 1 {
                w.field("trip", item.trip ?? item.id)
                w.field("status", item.status ?? "moving")
                w.field("bearing", ServerMessages.wireBearing(item.bearing ?? 0))
                w.field("stale", item.stale ?? false)  // PROTOCOL 18
            } else {
                w.key("bounds")
                w.beginArray()
                if let b = item.extent {
                    w.coordinate(b.west)
                    w.coordinate(b.south)
                    w.coordinate(b.east)
                    w.coordinate(b.north)
                }
                w.endArray()
                w.field("expansion_zoom", item.expansionZoom)
            }
            w.endObject()
        }
        w.endArray()
    }
}
