import Foundation
import TrackHubCore
import TrackHubProtocol

/// `trackhub-bench fleet [--riders N | <csv>] [--moving F] [--ticks K] [--bbox w,s,e,n]
/// [--zoom z] [--seed S]`: the fleet clustering index under a moving fleet, as the hub
/// uses it: the first build from nothing (`FleetIndex.build`), then each fleet tick one
/// `FleetIndexBuilder.build` of every rider, reusing what the riders that did not move
/// left from the tick before.
///
/// Riders come from `<csv>` (header, then `id,lat,lon` rows; bench/fleet/compare.py
/// writes one) or are `N` seeded riders around 20 cities (compare.py's shape: 60 % within
/// σ 3 km of a centre, the rest σ 15 km). Then `K` fleet ticks (default 5) each move a
/// share `F` (default 0.2) of the riders by about 10 m, as a second of driving does, and
/// build the index again. Prints the first build's time, the median (and least) CPU time of a tick,
/// the time of a city viewport query (`--bbox` at `--zoom`, default central Tokyo at 12)
/// and of a world query at zoom 3, the city viewport's whole answer as the hub makes it
/// (query, order, wire bytes), and the growth of the resident set while one index is
/// kept; then exactly one JSON line with those numbers.
func runFleetBench(arguments: [String]) {
    var options = FleetBenchOptions()
    options.parse(arguments)
    var members: [FleetMember]
    if let path = options.path {
        guard let loaded = fleetBenchReadCSV(path) else { fleetBenchUsage("cannot read \(path)") }
        members = loaded
    } else {
        members = fleetBenchCities(count: options.riders, seed: options.seed)
    }
    var rng = SplitMix64(seed: options.seed ^ 0x600d)
    let clock = ContinuousClock()

    let rssBefore = fleetBenchRSSBytes()
    let cpuBuild = fleetBenchCPUSeconds()
    let buildStart = clock.now
    var index = FleetIndex.build(members: members)
    let buildMs = fleetBenchSeconds(clock.now - buildStart) * 1000
    let buildCPUms = (fleetBenchCPUSeconds() - cpuBuild) * 1000
    let rssMB = Double(fleetBenchRSSBytes() - rssBefore) / 1_048_576

    // The ticks build as the hub does: one builder, reusing what unmoved riders left.
    let builder = FleetIndexBuilder()
    _ = builder.build(members: members)
    var tickCPU: [Double] = []
    var tickWall: [Double] = []
    var movedCount = 0
    for _ in 0..<options.ticks {
        // Outside the timing: which riders move, and where to (~10 m).
        movedCount = 0
        for k in members.indices where rng.uniform(0...1) < options.moving {
            let p = members[k].position
            let lat = min(max(p.lat + rng.uniform(-1...1) * 0.0001, -85), 85)
            let lon = min(max(p.lon + rng.uniform(-1...1) * 0.0002, -180), 180)
            members[k].position = GeoPoint(lat: lat, lon: lon)
            movedCount += 1
        }
        let cpu = fleetBenchCPUSeconds()
        let start = clock.now
        index = builder.build(members: members)
        tickWall.append(fleetBenchSeconds(clock.now - start) * 1000)
        tickCPU.append((fleetBenchCPUSeconds() - cpu) * 1000)
    }
    tickCPU.sort()
    tickWall.sort()

    func timeQuery(_ b: [Double], _ z: Int) -> (ms: Double, items: Int) {
        var n = 0
        var reps = 0
        let start = clock.now
        repeat {
            n = index.clusters(west: b[0], south: b[1], east: b[2], north: b[3], zoom: z).count
            reps += 1
        } while fleetBenchSeconds(clock.now - start) < 0.3 && reps < 100_000
        return (fleetBenchSeconds(clock.now - start) / Double(reps) * 1000, n)
    }
    /// A viewport's whole answer as the hub makes it: the query, the highest counts first
    /// (at most 2 000), and the wire bytes of the `clusters` message's content.
    func timeAnswer(_ b: [Double], _ z: Int) -> (ms: Double, bytes: Int) {
        var n = 0
        var reps = 0
        let start = clock.now
        repeat {
            let items = index.clusters(west: b[0], south: b[1], east: b[2], north: b[3], zoom: z)
            let (sent, truncated) = FleetIndex.truncate(items, maxItems: 2000)
            n = FleetMessages.clustersContent(total: index.total, truncated: truncated, items: sent).count
            reps += 1
        } while fleetBenchSeconds(clock.now - start) < 0.3 && reps < 100_000
        return (fleetBenchSeconds(clock.now - start) / Double(reps) * 1000, n)
    }
    let city = timeQuery(options.bbox, options.zoom)
    let world = timeQuery([-180, -85.05112878, 180, 85.05112878], 3)
    let cityAnswer = timeAnswer(options.bbox, options.zoom)

    print("fleet: \(members.count) riders, the index rebuilt on every tick")
    print(String(format: "build: %.1f ms wall, %.1f ms CPU", buildMs, buildCPUms))
    print(String(format: "fleet tick (%d riders moved, %d ticks): median %.1f ms CPU, %.1f ms wall; max %.1f ms CPU",
        movedCount, options.ticks, tickCPU[tickCPU.count / 2], tickWall[tickWall.count / 2], tickCPU.last ?? 0))
    print(String(format: "city viewport z%d %@: %.4f ms (%d items); world z3: %.4f ms (%d items)",
        options.zoom, options.bbox.map { String($0) }.joined(separator: ","), city.ms, city.items, world.ms, world.items))
    print(String(format: "city viewport's answer (query, order, wire bytes): %.4f ms (%d bytes)", cityAnswer.ms, cityAnswer.bytes))
    let bytes = index.approximateBytes
    print(String(format: "memory: resident set +%.1f MB for one index (arrays: members %.1f MB, clusters %.1f MB, grids %.1f MB)",
        rssMB, Double(bytes.members) / 1_048_576, Double(bytes.clusters) / 1_048_576, Double(bytes.grids) / 1_048_576))
    let fields: [String] = [
        "\"riders\":\(members.count)",
        "\"moving\":\(options.moving)",
        "\"build_ms\":\(fleetBenchRound(buildMs))",
        "\"build_cpu_ms\":\(fleetBenchRound(buildCPUms))",
        "\"tick_cpu_ms\":\(fleetBenchRound(tickCPU[tickCPU.count / 2]))",
        "\"tick_cpu_min_ms\":\(fleetBenchRound(tickCPU.first ?? 0))",
        "\"tick_wall_ms\":\(fleetBenchRound(tickWall[tickWall.count / 2]))",
        "\"query_city_ms\":\(fleetBenchRound(city.ms, digits: 5))",
        "\"city_items\":\(city.items)",
        "\"query_world_ms\":\(fleetBenchRound(world.ms, digits: 5))",
        "\"world_items\":\(world.items)",
        "\"answer_city_ms\":\(fleetBenchRound(cityAnswer.ms, digits: 5))",
        "\"rss_mb\":\(fleetBenchRound(rssMB))",
    ]
    print("{" + fields.joined(separator: ",") + "}")
}

/// The command line of `trackhub-bench fleet`.
private struct FleetBenchOptions {
    var path: String?
    var riders = 100_000
    var moving = 0.2
    var ticks = 5
    var bbox = [139.55, 35.59, 139.75, 35.76]
    var zoom = 12
    var seed: UInt64 = 7

    mutating func parse(_ arguments: [String]) {
        var i = 0
        func value() -> String {
            i += 1
            guard i < arguments.count else { fleetBenchUsage("\(arguments[i - 1]) needs a value") }
            return arguments[i]
        }
        while i < arguments.count {
            switch arguments[i] {
            case "--riders": riders = Int(value()) ?? -1
            case "--moving": moving = Double(value()) ?? -1
            case "--ticks": ticks = Int(value()) ?? -1
            case "--seed": seed = UInt64(value()) ?? 7
            case "--zoom": zoom = Int(value()) ?? -1
            case "--bbox": bbox = value().split(separator: ",").compactMap { Double(String($0)) }
            case let a where a.hasPrefix("--"): fleetBenchUsage("unknown option \(a)")
            case let a: path = a
            }
            i += 1
        }
        guard riders > 0, (0...1).contains(moving), ticks > 0, bbox.count == 4, zoom >= 0 else {
            fleetBenchUsage("--riders and --ticks must be positive, --moving in 0…1, --bbox four numbers, --zoom ≥ 0")
        }
    }
}

private func fleetBenchUsage(_ why: String) -> Never {
    FileHandle.standardError.write(Data("""
        trackhub-bench fleet: \(why)
        usage: trackhub-bench fleet [--riders N | <csv>] [--moving F] [--ticks K]
                                    [--bbox w,s,e,n] [--zoom z] [--seed S]

        """.utf8))
    exit(2)
}

/// The riders of a CSV file (header, then `id,lat,lon`), or nil when it cannot be read.
private func fleetBenchReadCSV(_ path: String) -> [FleetMember]? {
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
    var members: [FleetMember] = []
    for line in text.split(separator: "\n").dropFirst() {
        let f = line.split(separator: ",")
        guard f.count >= 3, let lat = Double(String(f[1])), let lon = Double(String(f[2])) else { continue }
        members.append(FleetMember(id: String(f[0]), position: GeoPoint(lat: lat, lon: lon), status: "moving", bearing: 0))
    }
    return members
}

/// `count` seeded riders around 20 cities, weighted as compare.py weights them.
private func fleetBenchCities(count: Int, seed: UInt64) -> [FleetMember] {
    let cities: [(lat: Double, lon: Double, weight: Double)] = [
        (60.1699, 24.9384, 3), (51.5074, -0.1278, 8), (48.8566, 2.3522, 7), (52.5200, 13.4050, 5),
        (40.4168, -3.7038, 5), (38.7223, -9.1393, 3), (40.7128, -74.0060, 9), (41.8781, -87.6298, 5),
        (37.7749, -122.4194, 4), (19.4326, -99.1332, 7), (-23.5505, -46.6333, 8), (-34.6037, -58.3816, 5),
        (6.5244, 3.3792, 6), (30.0444, 31.2357, 6), (19.0760, 72.8777, 9), (1.3521, 103.8198, 4),
        (35.6762, 139.6503, 10), (-33.8688, 151.2093, 4), (-36.8485, 174.7633, 2), (-18.1248, 178.4501, 1),
    ]
    let totalWeight = cities.reduce(0) { $0 + $1.weight }
    var rng = SplitMix64(seed: seed)
    var out: [FleetMember] = []
    out.reserveCapacity(count)
    for k in 0..<count {
        var pick = rng.uniform(0...totalWeight)
        var c = cities[cities.count - 1]
        for city in cities {
            if pick < city.weight {
                c = city
                break
            }
            pick -= city.weight
        }
        let sigmaKm = rng.uniform(0...1) < 0.6 ? 3.0 : 15.0
        let lat = min(max(c.lat + rng.gaussian(sigma: sigmaKm / 111.32), -85), 85)
        var lon = c.lon + rng.gaussian(sigma: sigmaKm / (111.32 * cos(c.lat * Double.pi / 180)))
        lon = (lon + 180).truncatingRemainder(dividingBy: 360)
        if lon < 0 { lon += 360 }
        out.append(FleetMember(id: "r\(k)", position: GeoPoint(lat: lat, lon: lon - 180), status: "moving", bearing: 0))
    }
    return out
}

private func fleetBenchRound(_ v: Double, digits: Int = 2) -> Double {
    let scale = pow(10, Double(digits))
    return (v * scale).rounded() / scale
}

private func fleetBenchSeconds(_ d: Duration) -> Double {
    Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18
}

/// CPU time used so far by all threads of this process, in seconds.
private func fleetBenchCPUSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
}

/// The resident set size of this process in bytes (Linux `/proc/self/statm`), or 0, after
/// handing freed memory back (`malloc_trim`): what is kept, not what the allocator holds on to.
private func fleetBenchRSSBytes() -> Int {
    fleetBenchMallocTrim()
    guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = statm.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// glibc's `malloc_trim(0)`, looked up at run time (Swift's Glibc module does not declare it).
private func fleetBenchMallocTrim() {
    typealias Trim = @convention(c) (Int) -> Int32
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return }
    _ = unsafeBitCast(symbol, to: Trim.self)(0)
}
