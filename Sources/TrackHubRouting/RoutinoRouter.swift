import CRoutino
import Glibc
import TrackHubCore

/// The embedded router (PROTOCOL 16 `--router routino:DIR`): a Routino database made by
/// `trackhub router build` (planetsplitter), searched with libroutino.
///
/// Routino's library keeps global state (its profiles, `Routino_errno`) and is not safe
/// to call from two threads at once, so one `RouterQueue` runs every search of the process
/// on one serial queue; that is why this is `@unchecked Sendable`.
public final class RoutinoRouter: Router, @unchecked Sendable {
    /// The backend's name in `/metrics` and logs.
    public let name = "routino"
    /// A point snapped to a road farther than this, in metres, is `tooFarFromRoad` (default 500).
    public let maxSnapDistanceM: Double
    /// libroutino routes through at most 99 points (its waypoints are numbered 1-99).
    public let maxPoints = 99
    private let database: OpaquePointer
    private let translation: OpaquePointer
    private let profiles: [TravelMode: OpaquePointer]

    /// Debian's routino-common files (profiles of each transport, English instructions).
    public static let defaultProfilesPath = "/usr/share/routino/profiles.xml"
    /// Debian's routino-common translations; libroutino needs its English one to compute a route.
    public static let defaultTranslationsPath = "/usr/share/routino/translations.xml"

    /// Routino's profile name for each mode.
    static func profileName(_ mode: TravelMode) -> String {
        switch mode {
        case .car: return "motorcar"
        case .bicycle: return "bicycle"
        case .foot: return "foot"
        }
    }

    /// Loads the database in `directory` and the profiles; the error says what is missing.
    /// Call it once per process (the profiles are global to libroutino).
    public init(
        directory: String, profilesPath: String = RoutinoRouter.defaultProfilesPath,
        translationsPath: String = RoutinoRouter.defaultTranslationsPath, maxSnapDistanceM: Double = 500
    ) throws(RouterSpecError) {
        guard trackhub_routino_check_api_version() == ROUTINO_ERROR_NONE else {
            throw RouterSpecError(message: "--router: libroutino's API version is not \(ROUTINO_API_VERSION)")
        }
        guard let database = Routino_LoadDatabase(directory, nil) else {
            throw RouterSpecError(
                message: "--router: no Routino database in \(directory) (error \(trackhub_routino_errno()); make one with `trackhub router build OSMFILE \(directory)`)")
        }
        guard Routino_ParseXMLProfiles(profilesPath) == 0 else {
            Routino_UnloadDatabase(database)
            throw RouterSpecError(message: "--router: cannot read Routino profiles \(profilesPath) (install routino-common)")
        }
        guard Routino_ParseXMLTranslations(translationsPath) == 0, let translation = Routino_GetTranslation("en") else {
            Routino_UnloadDatabase(database)
            throw RouterSpecError(message: "--router: cannot read Routino translations \(translationsPath) (install routino-common)")
        }
        var profiles: [TravelMode: OpaquePointer] = [:]
        for mode in TravelMode.allCases {
            guard let profile = Routino_GetProfile(Self.profileName(mode)) else {
                Routino_UnloadDatabase(database)
                throw RouterSpecError(message: "--router: \(profilesPath) has no profile \(Self.profileName(mode))")
            }
            guard Routino_ValidateProfile(database, profile) == ROUTINO_ERROR_NONE else {
                Routino_UnloadDatabase(database)
                throw RouterSpecError(message: "--router: profile \(Self.profileName(mode)) does not fit the database in \(directory)")
            }
            profiles[mode] = profile
        }
        self.database = database
        self.translation = translation
        self.profiles = profiles
        self.maxSnapDistanceM = maxSnapDistanceM
    }

    deinit {
        Routino_UnloadDatabase(database)
    }

    /// Points closer than this to the point before them are routed once (see `findRoute`).
    static let samePointM = 1.0

    /// The quickest route of the mode's Routino profile. Blocks; call it from one thread at a time
    /// (the `RouterQueue`'s). Points within a metre of the one before are routed once.
    public func findRoute(_ query: RouteQuery) -> Result<FoundRoute, RouterError> {
        guard query.points.count >= 2, query.points.count <= maxPoints else {
            return .failure(.failed("a route needs 2 to \(maxPoints) points, not \(query.points.count)"))
        }
        guard let profile = profiles[query.mode] else { return .failure(.failed("no profile for \(query.mode.rawValue)")) }
        // A point within a metre of the one before it adds nothing to the route, and Routino
        // 3.3 crashes (SIGSEGV) routing three equal points in a row after any other search:
        // such points are routed once. `kept[i]` is the query index of the i-th point routed.
        var kept: [Int] = []
        for index in query.points.indices {
            if let last = kept.last, Geodesy.distanceM(query.points[last], query.points[index]) < Self.samePointM { continue }
            kept.append(index)
        }
        if kept.count == 1 {
            kept.append(query.points.count - 1)  // two equal points route to themselves
        }
        var waypoints: [OpaquePointer?] = []
        defer { for w in waypoints { free(UnsafeMutableRawPointer(w)) } }
        for index in kept {
            let point = query.points[index]
            // Routino finds the nearest road of the profile (its own limit is wider than ours;
            // the snapped points are checked against `maxSnapDistanceM` below).
            guard let w = Routino_FindWaypoint(database, profile, point.lat, point.lon) else {
                return .failure(.tooFarFromRoad(index: index, distanceM: nil))
            }
            waypoints.append(w)
        }
        let options = Int32(ROUTINO_ROUTE_QUICKEST | ROUTINO_ROUTE_LIST_TEXT_ALL)
        let output = waypoints.withUnsafeMutableBufferPointer { buffer in
            Routino_CalculateRoute(database, profile, translation, buffer.baseAddress, Int32(buffer.count), options, nil)
        }
        guard let output else {
            let errno = Int(trackhub_routino_errno())
            if errno >= Int(ROUTINO_ERROR_NO_ROUTE_1) {
                let to = errno - Int(ROUTINO_ERROR_NO_ROUTE_1) + 1  // "no route to waypoint N", 1-based
                return .failure(.noPath(index: min(max(1, kept[min(to, kept.count - 1)]), query.points.count - 1)))
            }
            return .failure(.failed("Routino error \(errno)"))
        }
        defer { Routino_DeleteRoute(output) }
        var path: [GeoPoint] = []
        var snapped: [GeoPoint] = []
        var durationMin: Float = 0
        var node: UnsafeMutablePointer<Routino_Output>? = output
        let degrees = 180 / Double.pi
        while let p = node {
            let point = GeoPoint(lat: Double(p.pointee.lat) * degrees, lon: Double(p.pointee.lon) * degrees)
            if p.pointee.type == ROUTINO_POINT_WAYPOINT { snapped.append(point) }
            if path.last != point { path.append(point) }
            durationMin = p.pointee.time
            node = p.pointee.next
        }
        // PROTOCOL 16: a point farther than the snap distance from every road of the mode.
        if snapped.count == kept.count {
            for (index, found) in zip(kept, snapped) {
                let d = Geodesy.distanceM(query.points[index], found)
                if d > maxSnapDistanceM { return .failure(.tooFarFromRoad(index: index, distanceM: d)) }
            }
        }
        if path.count == 1, let only = path.first { path.append(only) }
        // The length is the path's own (Routino's `dist`, in km, is a few per cent off the
        // geodesic length of the points it returns); `time` is minutes, whatever routino.h's
        // comment says (the router's text output, "Total Durat'n", is the same number).
        var lengthM = 0.0
        for (a, b) in zip(path, path.dropFirst()) { lengthM += Geodesy.distanceM(a, b) }
        return .success(FoundRoute(path: path, lengthM: lengthM, durationS: Double(durationMin) * 60))
    }
}
