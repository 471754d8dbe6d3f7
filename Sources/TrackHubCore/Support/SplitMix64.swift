import Foundation

/// A small, fast, seedable random number generator (Steele, Lea and Flood's SplitMix64):
/// the same seed gives the same stream everywhere.
///
/// The only copy: the simulator, the benchmarks and the tests all draw from it, and tests
/// hard-code what some seeds give (`SplitMix64Tests` pins the sequence), so its output must
/// not change.
/// The simulator gives every rider its own generator derived from the run's seed, so a rider's
/// routes, speeds and noise do not depend on how the other riders' network replies interleave:
/// the same `--seed` gives the same riders.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator starting from `seed`.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// An independent generator for stream `index` (e.g. one per rider) of the run seeded `seed`.
    public static func stream(seed: UInt64, index: UInt64) -> SplitMix64 {
        var mixer = SplitMix64(seed: seed ^ (index &* 0xD1B5_4A32_D192_ED03))
        return SplitMix64(seed: mixer.next())
    }

    /// A uniform number in `range`.
    public mutating func uniform(_ range: ClosedRange<Double>) -> Double {
        let unit = Double(next() >> 11) * 0x1.0p-53
        return range.lowerBound + (range.upperBound - range.lowerBound) * unit
    }

    /// A uniform integer in `range`.
    public mutating func int(_ range: ClosedRange<Int>) -> Int {
        Int.random(in: range, using: &self)
    }

    /// True with probability `p`.
    public mutating func chance(_ p: Double) -> Bool { uniform(0...1) < p }

    /// A normally distributed number (Box–Muller), mean 0, standard deviation `sigma`.
    public mutating func gaussian(sigma: Double) -> Double {
        let u1 = max(uniform(0...1), 1e-12)
        let u2 = uniform(0...1)
        return sigma * (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
    }
}
