import Foundation
import TrackHubCore

/// The places riders go: the planned I-95 routes, the Helsinki road graph for routes made on
/// the fly, and the recorded traces that trace riders replay. Immutable once loaded.
public final class RouteCatalog: Sendable {
    /// A fixed route with a name.
    public struct NamedRoute: Sendable {
        /// The GeoJSON feature's `route_id` (`i95` when it has none), for logs and tests.
        public var name: String
        /// The route; a trip on it sends the hub its points.
        public var route: Route
        /// A named route.
        public init(name: String, route: Route) {
            self.name = name
            self.route = route
        }
    }

    /// The planned I-95 routes, for synthetic trips not on a Helsinki graph route
    /// (`graphRouteShare`); never empty from `load`.
    public let fixedRoutes: [NamedRoute]
    let graph: RoadGraph?
    /// The recorded tracks trace riders replay, in file-name order; may be empty.
    public let traces: [RecordedTrack]

    /// A catalog from parts (tests build small ones).
    public init(fixedRoutes: [NamedRoute], traces: [RecordedTrack] = []) {
        self.fixedRoutes = fixedRoutes
        self.graph = nil
        self.traces = traces
    }

    init(fixedRoutes: [NamedRoute], graph: RoadGraph?, traces: [RecordedTrack]) {
        self.fixedRoutes = fixedRoutes
        self.graph = graph
        self.traces = traces
    }

    /// Loads `routes_i95.geojson`, `roads_helsinki.geojson` and the `*.gpx` / `*.csv` traces of
    /// a samples folder (see data/samples/README.md).
    /// - Throws: `SimulatorError.badSampleData` when a file is missing or malformed.
    public static func load(directory: String) throws(SimulatorError) -> RouteCatalog {
        var routes: [NamedRoute] = []
        for line in try GeoJSONLines.load(path: directory + "/routes_i95.geojson") {
            guard let route = try? Route(points: line.points) else { continue }
            routes.append(NamedRoute(name: line.properties["route_id"]?.stringValue ?? "i95", route: route))
        }
        let roads = try GeoJSONLines.load(path: directory + "/roads_helsinki.geojson")
        let graph = RoadGraph(lines: roads)
        var traces: [RecordedTrack] = []
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        for file in files.sorted() where file.hasSuffix(".gpx") || file.hasSuffix(".csv") {
            traces.append(try TrackReader.read(path: directory + "/" + file))
        }
        guard !routes.isEmpty, graph.largestComponent.count >= 2 else {
            throw .badSampleData("\(directory) holds no usable routes")
        }
        return RouteCatalog(fixedRoutes: routes, graph: graph, traces: traces)
    }

    /// A route from the Helsinki graph between two random nodes, `minM`–`maxM` long.
    func makeGraphRoute(using rng: inout SplitMix64, minM: Double = 900, maxM: Double = 3500) -> (RoadGraph.Path, Route)? {
        guard let graph, graph.largestComponent.count >= 2 else { return nil }
        for _ in 0..<30 {
            let a = graph.largestComponent[rng.int(0...(graph.largestComponent.count - 1))]
            let b = graph.largestComponent[rng.int(0...(graph.largestComponent.count - 1))]
            guard a != b, let path = graph.shortestPath(from: a, to: b), (minM...maxM).contains(path.lengthM),
                  let route = try? Route(points: path.points) else { continue }
            return (path, route)
        }
        return nil
    }

    /// A detour for a rerouted rider on a graph route: from along-route distance `atM` to the
    /// destination avoiding the rest of the planned path where the graph allows; nil when the
    /// graph has no other way.
    func makeDetour(on path: RoadGraph.Path, route: Route, atM: Double) -> Route? {
        guard let graph else { return nil }
        var nodeAlong: [Double] = [0]
        var total = 0.0
        for i in 1..<path.nodes.count {
            let edge = route.nearest(to: graph.positions[path.nodes[i]], fromAlongM: total)
            total = edge.alongM
            nodeAlong.append(total)
        }
        guard let k = nodeAlong.firstIndex(where: { $0 > atM + 5 }), k < path.nodes.count - 1,
              let destination = path.nodes.last else { return nil }
        let remainingRoads = Set(path.roads[(k - 1)...])
        guard let alternative = graph.shortestPath(from: path.nodes[k], to: destination, penalised: remainingRoads, penalty: 6),
              alternative.roads != Array(path.roads[k...]),
              alternative.roads.first != path.roads[k - 1],
              alternative.lengthM <= 3 * (route.lengthM - atM) + 500 else { return nil }
        let prefix = route.path(from: atM, to: nodeAlong[k])
        return try? Route(points: prefix + alternative.points.dropFirst())
    }
}
