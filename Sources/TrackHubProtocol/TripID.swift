/// Trip id rules (PROTOCOL conventions): 1–64 characters from `A-Z a-z 0-9 . _ : -`,
/// case-sensitive, and not `.` or `..`.
public enum TripID {
    /// The longest trip id, in characters.
    public static let maxLength = 64

    /// True when `id` is a valid trip id.
    public static func isValid(_ id: String) -> Bool {
        var count = 0
        var allDots = true
        for byte in id.utf8 {
            count += 1
            guard count <= maxLength else { return false }
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: ":"), UInt8(ascii: "-"):
                allDots = false
            case UInt8(ascii: "."):
                break
            default:
                return false
            }
        }
        if count == 0 { return false }
        if allDots && count <= 2 { return false }
        return true
    }

    /// The error for an invalid id in `field`.
    public static func invalidError(field: String) -> ProtocolError {
        .badRequest("\(field) must be 1–64 characters of A-Z a-z 0-9 . _ : - (and not \".\" or \"..\")")
    }

    /// Returns `id` when valid, else throws `bad_request` naming `field`.
    public static func validate(_ id: String, field: String = "trip") throws(ProtocolError) -> String {
        guard isValid(id) else { throw invalidError(field: field) }
        return id
    }
}
