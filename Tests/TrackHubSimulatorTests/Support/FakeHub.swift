import Foundation
import TrackHubCore
import TrackHubProtocol
@testable import TrackHubSimulator

/// A hub stand-in that answers a `Simulation`'s actions at once, in the same step, so a test
/// drives the engine with a hand-moved clock and gets the same run every time. It follows just
/// enough of PROTOCOL 6: acks every fix and proceed, and sends `waypoint_reached` / `arrived`
/// when a fix lands within 20 m of the next stop.
struct FakeHub {
    struct TripState {
        var waypoints: [GeoPoint]
        var visited = 0
        var destination: GeoPoint?
        var holding = false
        var arrived = false
        /// When each `waypoint_reached` was sent and each `proceed` came, in order.
        var reachedAt: [Int64] = []
        var proceededAt: [Int64] = []
    }

    struct SentFix {
        var rider: Int
        var now: Int64
        var text: String
        var trip: String
        var ts: Int64
        var lat: Double
        var lon: Double
    }

    var simulation: Simulation
    var now: Int64
    var trips: [String: TripState] = [:]
    var nextTrip = 1
    var fixes: [SentFix] = []
    /// Every text message sent, with the time and rider.
    var log: [(now: Int64, rider: Int, text: String)] = []
    /// Fixes sent while their trip was holding or arrived (a simulated courier must send none).
    var fixesWhileStopped = 0
    /// Every trip-creating request body, by rider, in order.
    var createdBy: [Int: [String]] = [:]
    /// PROTOCOL 18: when set, the interval this hub asks of every courier (a `cadence` after
    /// the ack of a trip's first fix, and after any fix once this changed).
    var cadenceMs: Int64?
    private var cadenceSent: [String: Int64] = [:]
    /// PROTOCOL 17: share requests (rider, path, body), customers' connections opened (rider,
    /// link, token), their messages sent (rider, link, text) and closed (rider, link); with
    /// `issuesNoLinks` the hub answers share requests 409, as an open hub does.
    var shares: [(rider: Int, path: String, body: String)] = []
    var linkOpens: [(rider: Int, link: Int, token: String?)] = []
    var linkLog: [(rider: Int, link: Int, text: String)] = []
    var linkCloses: [(rider: Int, link: Int)] = []
    var issuesNoLinks = false

    init(simulation: Simulation, start: Int64 = 1_750_000_000_000) {
        self.simulation = simulation
        self.now = start
    }

    /// Moves the clock by `ms` and runs everything due.
    mutating func step(_ ms: Int64 = 10) {
        now += ms
        process(simulation.advance(now: now))
    }

    mutating func run(forMs total: Int64, step ms: Int64 = 10) {
        let end = now + total
        while now < end { step(ms) }
    }

    /// Hands the simulation a message from the hub on customer `link` of `rider`, and carries
    /// out what it answers.
    mutating func sendToLink(rider: Int, link: Int, _ text: String) {
        process(simulation.handle(.linkMessage(rider: rider, link: link, bytes: Array(text.utf8)), now: now))
    }

    private mutating func process(_ first: [SimulationAction]) {
        var queue = first
        while !queue.isEmpty {
            let action = queue.removeFirst()
            for event in answer(action) { queue += simulation.handle(event, now: now) }
        }
    }

    private mutating func answer(_ action: SimulationAction) -> [TransportEvent] {
        let rider = action.rider
        switch action.action {
        case .connect:
            return [.opened(rider: rider)]
        case .disconnect:
            return []
        case .openLink(let link, let token):
            linkOpens.append((rider, link, token))
            return [.linkOpened(rider: rider, link: link)]
        case .sendLink(let link, let text):
            linkLog.append((rider, link, text))
            return []
        case .closeLink(let link):
            linkCloses.append((rider, link))
            return []
        case .send(let text):
            log.append((now, rider, text))
            guard let message = try? JSONParser().parse(text), let op = message["op"]?.stringValue,
                  let id = message["id"]?.numberValue?.int64Value, let trip = message["trip"]?.stringValue else { return [] }
            switch op {
            case "fix":
                let lat = message["lat"]?.doubleValue ?? 0, lon = message["lon"]?.doubleValue ?? 0
                fixes.append(SentFix(rider: rider, now: now, text: text, trip: trip, ts: message["ts"]?.numberValue?.int64Value ?? 0, lat: lat, lon: lon))
                var events = [reply(rider, #"{"type":"ack","re":\#(id),"trip":"\#(trip)","applied":true}"#)]
                if let cadenceMs, cadenceSent[trip] != cadenceMs {
                    cadenceSent[trip] = cadenceMs
                    events.append(reply(rider, #"{"type":"cadence","trip":"\#(trip)","interval_ms":\#(cadenceMs),"watched":false}"#))
                }
                guard var state = trips[trip] else { return events }
                if state.holding || state.arrived { fixesWhileStopped += 1 }
                let here = GeoPoint(lat: lat, lon: lon)
                if !state.holding && !state.arrived {
                    if state.visited < state.waypoints.count {
                        if Geodesy.distanceM(here, state.waypoints[state.visited]) < 20 {
                            state.holding = true
                            state.reachedAt.append(now)
                            events.append(reply(rider, #"{"type":"event","trip":"\#(trip)","n":1,"name":"waypoint_reached","index":\#(state.visited)}"#))
                        }
                    } else if let destination = state.destination, Geodesy.distanceM(here, destination) < 20 {
                        state.arrived = true
                        events.append(reply(rider, #"{"type":"event","trip":"\#(trip)","n":1,"name":"arrived"}"#))
                    }
                }
                trips[trip] = state
                return events
            case "proceed":
                guard var state = trips[trip], state.holding else {
                    return [reply(rider, #"{"type":"error","re":\#(id),"code":"conflict","message":"trip is not holding"}"#)]
                }
                state.holding = false
                state.proceededAt.append(now)
                state.visited += 1
                trips[trip] = state
                return [reply(rider, #"{"type":"ack","re":\#(id),"trip":"\#(trip)","applied":true}"#),
                        reply(rider, #"{"type":"event","trip":"\#(trip)","n":2,"name":"waypoint_resumed","index":\#(state.visited - 1)}"#)]
            default:
                return []
            }
        case .http(let call):
            let body = call.body.flatMap { try? JSONParser().parse($0) }
            switch call.method {
            case "POST" where call.path.hasSuffix("/share"):
                // A stop's link (PROTOCOL 17); an open hub answers 409 instead.
                shares.append((rider, call.path, String(decoding: call.body ?? [], as: UTF8.self)))
                if issuesNoLinks {
                    return [.httpResponse(rider: rider, id: call.id, status: 409, body: Array(#"{"error":{"code":"conflict","message":"share links need a secured hub"}}"#.utf8))]
                }
                let stop = body?["stop"]?.stringValue ?? "?"
                return [.httpResponse(rider: rider, id: call.id, status: 201, body: Array(#"{"token":"token-\#(stop)","jti":"j","url":"/t/token-\#(stop)","expires_at":1}"#.utf8))]
            case "POST":
                let id = "T\(nextTrip)"
                createdBy[rider, default: []].append(String(decoding: call.body ?? [], as: UTF8.self))
                nextTrip += 1
                let route = body?["route"]?.arrayValue?.compactMap(Self.point) ?? []
                let waypoints = body?["waypoints"]?.arrayValue?.compactMap { value -> GeoPoint? in
                    guard let lat = value["lat"]?.doubleValue, let lon = value["lon"]?.doubleValue else { return nil }
                    return GeoPoint(lat: lat, lon: lon)
                } ?? []
                trips[id] = TripState(waypoints: waypoints, destination: route.last)
                return [.httpResponse(rider: rider, id: call.id, status: 201, body: Array(#"{"trip":"\#(id)","status":"pending"}"#.utf8))]
            case "PUT":
                let id = call.path.split(separator: "/")[2]
                if let route = body?["route"]?.arrayValue?.compactMap(Self.point) {
                    trips[String(id)]?.destination = route.last
                }
                return [.httpResponse(rider: rider, id: call.id, status: 200, body: Array("{}".utf8))]
            default:
                return [.httpResponse(rider: rider, id: call.id, status: 200, body: Array("{}".utf8))]
            }
        }
    }

    private func reply(_ rider: Int, _ text: String) -> TransportEvent {
        .message(rider: rider, bytes: Array(text.utf8))
    }

    private static func point(_ value: JSONValue) -> GeoPoint? {
        guard let pair = value.arrayValue, pair.count == 2, let lon = pair[0].doubleValue, let lat = pair[1].doubleValue else { return nil }
        return GeoPoint(lat: lat, lon: lon)
    }
}
