/// A change to a registered phone (PROTOCOL 11), checked as far as the request alone allows
/// (the id's length on a secured hub, that the trip exists here): what an admin asks for,
/// in one form for both command logs.
enum DeviceCommand: Sendable {
    /// Registers the device, or rebinds and renames it (its `last_seen` and
    /// `last_position` stay). `trip` nil: bound to no trip.
    case put(id: String, trip: String?, name: String?)
    /// Forgets the device: its fixes are refused as an unknown device's from then on.
    case delete(id: String)

    var device: String {
        switch self {
        case .put(let id, _, _), .delete(let id): return id
        }
    }
}
