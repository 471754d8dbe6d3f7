import TrackHubCore

/// A directed road graph built from GeoJSON edges (`u_node`, `v_node`, `oneway`), for
/// planning routes with Dijkstra. Two-way roads become two directed edges.
public struct RoadGraph: Sendable {
    /// One directed edge: geometry from `from` to `to`.
    struct Edge: Sendable {
        var from: Int
        var to: Int
        var points: [GeoPoint]
        var lengthM: Double
        /// The same road travelled the other way (for penalising both directions).
        var roadID: Int
    }

    /// A path through the graph: its geometry and the node indices it passes.
    struct Path: Sendable, Equatable {
        var nodes: [Int]
        var roads: [Int]
        var points: [GeoPoint]
        var lengthM: Double
    }

    private(set) var positions: [GeoPoint] = []
    private(set) var edges: [Edge] = []
    private(set) var outgoing: [[Int]] = []
    /// Nodes of the largest strongly reachable set from which random trips start and end.
    private(set) var largestComponent: [Int] = []

    /// Builds the graph from LineString features with `u_node`, `v_node` and `oneway`.
    init(lines: [GeoJSONLine]) {
        var index: [Int64: Int] = [:]
        func node(_ id: Int64, _ at: GeoPoint) -> Int {
            if let known = index[id] { return known }
            index[id] = positions.count
            positions.append(at)
            outgoing.append([])
            return positions.count - 1
        }
        for (road, line) in lines.enumerated() {
            guard let u = line.properties["u_node"]?.numberValue?.int64Value,
                  let v = line.properties["v_node"]?.numberValue?.int64Value,
                  let first = line.points.first, let last = line.points.last else { continue }
            let a = node(u, first), b = node(v, last)
            var length = 0.0
            for i in 1..<line.points.count { length += Geodesy.distanceM(line.points[i - 1], line.points[i]) }
            guard length > 0 else { continue }
            addEdge(Edge(from: a, to: b, points: line.points, lengthM: length, roadID: road))
            if line.properties["oneway"]?.boolValue != true {
                addEdge(Edge(from: b, to: a, points: line.points.reversed(), lengthM: length, roadID: road))
            }
        }
        largestComponent = Self.largestMutuallyReachable(self)
    }

    private mutating func addEdge(_ edge: Edge) {
        outgoing[edge.from].append(edges.count)
        edges.append(edge)
    }

    /// The number of nodes.
    var nodeCount: Int { positions.count }

    /// The shortest path from `source` to `target`, edges of the roads in `penalised` costing
    /// `penalty` times their length; nil when `target` cannot be reached.
    func shortestPath(from source: Int, to target: Int, penalised: Set<Int> = [], penalty: Double = 1) -> Path? {
        var distance = [Double](repeating: .infinity, count: nodeCount)
        var via = [Int](repeating: -1, count: nodeCount)
        var heap = MinHeap<Double, Int>()
        distance[source] = 0
        heap.push(0, source)
        while let (d, n) = heap.pop() {
            if d > distance[n] { continue }
            if n == target { break }
            for e in outgoing[n] {
                let edge = edges[e]
                let cost = edge.lengthM * (penalised.contains(edge.roadID) ? penalty : 1)
                if d + cost < distance[edge.to] {
                    distance[edge.to] = d + cost
                    via[edge.to] = e
                    heap.push(d + cost, edge.to)
                }
            }
        }
        guard source != target, distance[target].isFinite else { return nil }
        var chain: [Int] = []
        var n = target
        while n != source {
            let e = via[n]
            chain.append(e)
            n = edges[e].from
        }
        chain.reverse()
        var path = Path(nodes: [source], roads: [], points: [positions[source]], lengthM: 0)
        for e in chain {
            let edge = edges[e]
            path.nodes.append(edge.to)
            path.roads.append(edge.roadID)
            path.points.append(contentsOf: edge.points.dropFirst())
            path.lengthM += edge.lengthM
        }
        return path
    }

    /// Nodes reachable from the best-connected node and able to reach it back: any two of them
    /// have a path both ways.
    private static func largestMutuallyReachable(_ graph: RoadGraph) -> [Int] {
        guard graph.nodeCount > 0 else { return [] }
        var incoming = [[Int]](repeating: [], count: graph.nodeCount)
        for edge in graph.edges { incoming[edge.to].append(edge.from) }
        func reach(_ start: Int, _ next: (Int) -> [Int]) -> Set<Int> {
            var seen: Set<Int> = [start]
            var stack = [start]
            while let n = stack.popLast() {
                for m in next(n) where !seen.contains(m) {
                    seen.insert(m)
                    stack.append(m)
                }
            }
            return seen
        }
        var best: [Int] = []
        var covered = Set<Int>()
        for start in 0..<graph.nodeCount where !covered.contains(start) {
            let forward = reach(start) { graph.outgoing[$0].map { graph.edges[$0].to } }
            let backward = reach(start) { incoming[$0] }
            let both = forward.intersection(backward)
            covered.formUnion(both)
            if both.count > best.count { best = both.sorted() }
            if best.count * 2 > graph.nodeCount { break }
        }
        return best
    }
}
