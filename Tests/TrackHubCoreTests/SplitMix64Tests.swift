import Testing
import TrackHubCore

/// The one seeded generator every test, the simulator and the benchmarks draw from: fixtures
/// hard-code what its seeds give, so its output must never change.
@Suite struct SplitMix64Tests {
    /// SplitMix64 as its reference gives it (Steele, Lea and Flood; increment
    /// 0x9E3779B97F4A7C15, mix constants 0xBF58476D1CE4E5B9 and 0x94D049BB133111EB).
    @Test func seedZeroGivesTheReferenceSequence() {
        var rng = SplitMix64(seed: 0)
        #expect([rng.next(), rng.next(), rng.next(), rng.next()] == [
            0xE220_A839_7B1D_CDAF, 0x6E78_9E6A_A1B9_65F4, 0x06C4_5D18_8009_454F, 0xF88B_B8A8_724C_81EC,
        ])
    }

    @Test func theSameSeedRepeatsAndAnotherDoesNot() {
        var a = SplitMix64(seed: 1), b = SplitMix64(seed: 1), c = SplitMix64(seed: 2)
        let first = (0..<10).map { _ in a.next() }
        #expect(first == (0..<10).map { _ in b.next() })
        #expect(first != (0..<10).map { _ in c.next() })
    }

    /// The simulator gives each rider two streams of the run's seed: they must differ from
    /// each other and from the plain seeded generator, and repeat for the same (seed, index).
    @Test func streamsAreDistinctAndRepeatable() {
        func draws(_ rng: SplitMix64) -> [UInt64] {
            var copy = rng
            return (0..<4).map { _ in copy.next() }
        }
        let streams = (0..<8).map { draws(SplitMix64.stream(seed: 42, index: UInt64($0))) }
        #expect(Set(streams.map { $0[0] }).count == 8)
        #expect(!streams.contains(draws(SplitMix64(seed: 42))))
        #expect(draws(SplitMix64.stream(seed: 42, index: 3)) == streams[3])
    }

    @Test func uniformStaysInItsRange() {
        var rng = SplitMix64(seed: 9)
        let draws = (0..<10_000).map { _ in rng.uniform(-3...5) }
        #expect(draws.min()! >= -3 && draws.max()! <= 5)
        #expect(draws.min()! < -2.9 && draws.max()! > 4.9, "spread over the whole range")
    }
}
