import Foundation
import TrackHubCore

/// `trackhub-bench fleet <csv> [--bbox west,south,east,north] [--zoom z] [--builds k] [--sequential]`:
/// builds the fleet clustering index over the riders of `<csv>` (header, then
/// `id,lat,lon` rows), and prints one JSON line: the median build time over `k`
/// builds (wall clock, and CPU time of all threads), the time of a viewport query (`--bbox` at `--zoom`, default the box around
/// the first rider ±0.1° at zoom 12) and of a world query at zoom 3, their item
/// counts, and the growth of the resident set while one index is kept.
/// `--sequential` builds on one thread only.
func runFleetBench(arguments: [String]) {
    var path: String?
    var bbox: [Double]?
    var zoom = 12
    var builds = 0
    var parallel = true
    var i = 0
    while i < arguments.count {
        let a = arguments[i]
        switch a {
        case "--bbox" where i + 1 < arguments.count:
            bbox = arguments[i + 1].split(separator: ",").compactMap { Double(String($0)) }
            i += 1
        case "--zoom" where i + 1 < arguments.count:
            zoom = Int(arguments[i + 1]) ?? zoom
            i += 1
        case "--sequential":
            parallel = false
        case "--builds" where i + 1 < arguments.count:
            builds = Int(arguments[i + 1]) ?? builds
            i += 1
        default:
            if path == nil && a != "fleet" { path = a }
        }
        i += 1
    }
    guard let path, let text = try? String(contentsOfFile: path, encoding: .utf8) else {
        FileHandle.standardError.write(Data("usage: trackhub-bench fleet <csv> [--bbox w,s,e,n] [--zoom z] [--builds k] [--sequential]\n".utf8))
        exit(2)
    }
    var members: [FleetMember] = []
    for line in text.split(separator: "\n").dropFirst() {
        let f = line.split(separator: ",")
        guard f.count >= 3, let lat = Double(String(f[1])), let lon = Double(String(f[2])) else { continue }
        members.append(FleetMember(id: String(f[0]), position: GeoPoint(lat: lat, lon: lon), status: "moving", bearing: 0))
    }
    if builds <= 0 { builds = members.count >= 500_000 ? 3 : 7 }
    let box: [Double]
    if let bbox, bbox.count == 4 {
        box = bbox
    } else if let first = members.first {
        box = [first.position.lon - 0.1, first.position.lat - 0.1, first.position.lon + 0.1, first.position.lat + 0.1]
    } else {
        box = [-180, -85.05112878, 180, 85.05112878]
    }

    func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18
    }
    let clock = ContinuousClock()

    // Memory: the resident set grows by about the size of one index kept alive.
    let rssBefore = fleetBenchRSSBytes()
    var kept: FleetIndex? = FleetIndex.build(members: members, parallel: parallel)
    let rssAfter = fleetBenchRSSBytes()

    var times: [Double] = []
    var cpuTimes: [Double] = []
    for _ in 0..<builds {
        let cpu = fleetBenchCPUSeconds()
        let start = clock.now
        let index = FleetIndex.build(members: members, parallel: parallel)
        times.append(seconds(clock.now - start))
        cpuTimes.append(fleetBenchCPUSeconds() - cpu)
        precondition(index.total == members.count)
    }
    times.sort()
    cpuTimes.sort()
    guard let index = kept else { return }

    func timeQuery(_ b: [Double], _ z: Int) -> (ms: Double, items: Int) {
        var n = 0
        var reps = 0
        let start = clock.now
        repeat {
            n = index.clusters(west: b[0], south: b[1], east: b[2], north: b[3], zoom: z).count
            reps += 1
        } while seconds(clock.now - start) < 0.2 && reps < 100_000
        return (seconds(clock.now - start) / Double(reps) * 1000, n)
    }
    let city = timeQuery(box, zoom)
    let world = timeQuery([-180, -85.05112878, 180, 85.05112878], 3)
    kept = nil

    let fields: [String] = [
        "\"impl\":\"trackhub-swift\"",
        "\"points\":\(members.count)",
        "\"builds\":\(builds)",
        "\"parallel\":\(parallel)",
        "\"build_ms_median\":\(times[times.count / 2] * 1000)",
        "\"build_ms_min\":\((times.first ?? 0) * 1000)",
        "\"build_cpu_ms_median\":\(cpuTimes[cpuTimes.count / 2] * 1000)",
        "\"city_query_ms\":\(city.ms)",
        "\"city_items\":\(city.items)",
        "\"city_zoom\":\(zoom)",
        "\"world_z3_query_ms\":\(world.ms)",
        "\"world_z3_items\":\(world.items)",
        "\"rss_delta_mb\":\(Double(rssAfter - rssBefore) / 1_048_576)",
    ]
    print("{" + fields.joined(separator: ",") + "}")
}

/// CPU time used so far by all threads of this process, in seconds.
private func fleetBenchCPUSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
}

/// The resident set size of this process in bytes (Linux `/proc/self/statm`), or 0.
private func fleetBenchRSSBytes() -> Int {
    guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = statm.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}
