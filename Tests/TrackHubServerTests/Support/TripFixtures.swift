import Foundation
import Testing
import TrackHubTesting

/// Realistic geometry for the server tests: a straight street running north along the
/// meridian -9.14 near Lisbon, from 38.70 to 38.72 (about 2.2 km).
enum Lisbon {
    static let lon = -9.14
    static let southLat = 38.70
    static let northLat = 38.72
    /// Metres per degree of latitude on the hub's sphere (IUGG mean radius).
    static let metresPerDegree = 6_371_008.8 * Double.pi / 180
    /// The route's length in metres.
    static var lengthM: Double { (northLat - southLat) * metresPerDegree }

    /// The route as `[lon, lat]` pairs, `points` evenly spaced points from south to north.
    static func route(points: Int = 21) -> [[Double]] {
        (0..<points).map { i in [lon, southLat + (northLat - southLat) * Double(i) / Double(points - 1)] }
    }

    /// The latitude `metres` north of the route's start.
    static func lat(alongM metres: Double) -> Double { southLat + metres / metresPerDegree }

    /// A point `metres` along the route, as `{lat, lon}`.
    static func point(alongM metres: Double) -> [String: Any] { ["lat": lat(alongM: metres), "lon": lon] }

    /// The longitude `metres` east of the route at latitude `lat`.
    static func lon(eastM metres: Double, atLat lat: Double) -> Double {
        lon + metres / (metresPerDegree * cos(lat * .pi / 180))
    }
}

/// Now in ms since the epoch (fix timestamps in tests).
func nowMillis() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

/// Great-circle distance in metres (haversine on the hub's sphere).
func distanceM(_ lat1: Double, _ lon1: Double, _ lat2: Double, _ lon2: Double) -> Double {
    let r = 6_371_008.8
    let p1 = lat1 * .pi / 180, p2 = lat2 * .pi / 180
    let dp = (lat2 - lat1) * .pi / 180, dl = (lon2 - lon1) * .pi / 180
    let h = sin(dp / 2) * sin(dp / 2) + cos(p1) * cos(p2) * sin(dl / 2) * sin(dl / 2)
    return 2 * r * asin(min(1, sqrt(h)))
}

/// Distance between two messages that carry `lat`/`lon`.
func distanceM(_ a: [String: Any], _ b: [String: Any]) -> Double {
    distanceM(a["lat"] as! Double, a["lon"] as! Double, b["lat"] as! Double, b["lon"] as! Double)
}

/// A courier's device: fixes with increasing `seq` and device times 10 s apart, starting
/// 20 minutes in the past (never ahead of the hub's clock), so that 10 s per fix keeps any
/// step of up to 300 m under 30 m/s.
struct Courier {
    let trip: String
    var seq: Int64 = 0
    var ts: Int64 = nowMillis() - 20 * 60 * 1000
    static let stepMs: Int64 = 10_000

    init(trip: String) { self.trip = trip }

    /// The next fix `alongM` metres up the route (optionally `eastM` metres off it).
    mutating func fix(alongM: Double, eastM: Double = 0, durationMs: Int? = 1000, trip tripField: Bool = true) -> [String: Any] {
        seq += 1
        ts += Courier.stepMs
        let lat = Lisbon.lat(alongM: alongM)
        var fix: [String: Any] = ["lat": lat, "lon": Lisbon.lon(eastM: eastM, atLat: lat), "ts": ts, "seq": seq]
        if tripField {
            fix["op"] = "fix"
            fix["trip"] = trip
        }
        if let durationMs { fix["duration_ms"] = durationMs }
        return fix
    }
}

extension TestHub {
    /// Creates a trip on the Lisbon route (more fields merged in) and returns its id.
    @discardableResult
    func createLisbonTrip(_ id: String, points: Int = 21, _ extra: [String: Any] = [:]) throws -> [String: Any] {
        var body: [String: Any] = ["id": id, "route": Lisbon.route(points: points)]
        body.merge(extra) { $1 }
        return try createTrip(body)
    }

    /// The value of an unlabelled metric in /metrics (nil when absent).
    func metric(_ name: String) throws -> Double? {
        let (status, body) = try http("GET", "/metrics")
        #expect(status == 200)
        for line in String(decoding: body, as: UTF8.self).split(separator: "\n") where line.hasPrefix(name + " ") {
            return Double(line.dropFirst(name.count + 1))
        }
        return nil
    }

    /// A request with a body given as text (possibly not valid JSON), decoded like `httpJSON`.
    func httpText(_ method: String, _ path: String, _ text: String) throws -> (status: Int, json: [String: Any]) {
        let (status, data) = try http(method, path, body: Data(text.utf8), headers: text.isEmpty ? [:] : ["Content-Type": "application/json"])
        return (status, (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:])
    }

    /// The error body of an HTTP answer: (code, message).
    static func errorOf(_ json: [String: Any]) -> (code: String?, message: String) {
        let error = json["error"] as? [String: Any]
        return (error?["code"] as? String, error?["message"] as? String ?? "")
    }
}

extension TestConnection {
    /// Messages in arrival order up to and including the first one for which `stop` holds.
    func collect(_ what: String, timeout: Double = 10, until stop: ([String: Any]) -> Bool) throws -> [[String: Any]] {
        var out: [[String: Any]] = []
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { throw TestClients.Failure(description: "timed out collecting until \(what)") }
            let message = try next(what, timeout: remaining)
            out.append(message)
            if stop(message) { return out }
        }
    }

    /// Waits for the frame that stands at `lat` (within about a decimetre).
    @discardableResult
    func nextFrame(atLat lat: Double, timeout: Double = 10) throws -> [String: Any] {
        try next(type: "frame", timeout: timeout) { abs(($0["lat"] as? Double ?? 0) - lat) < 1e-6 }
    }

    /// Subscribes and returns the snapshot.
    @discardableResult
    func subscribe(_ trip: String, id: Int, _ extra: [String: Any] = [:]) throws -> [String: Any] {
        var message: [String: Any] = ["op": "subscribe", "trip": trip]
        message.merge(extra) { $1 }
        let reply = try request(message, id: id)
        #expect(reply["type"] as? String == "snapshot", "subscribe answered \(reply)")
        return reply
    }

    /// Sends a fix and returns its ack (failing the test if the reply is something else).
    @discardableResult
    func sendFix(_ fix: [String: Any], id: Int) throws -> [String: Any] {
        let reply = try request(fix, id: id)
        #expect(reply["type"] as? String == "ack", "fix answered \(reply)")
        return reply
    }
}

extension Dictionary where Key == String, Value == Any {
    var type: String? { self["type"] as? String }
    var name: String? { self["name"] as? String }
    func int(_ key: String) -> Int? { self[key] as? Int }
    func double(_ key: String) -> Double? { self[key] as? Double }
}
