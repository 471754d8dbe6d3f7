import Testing

@Suite struct SeededRNGTests {
    /// The test generator is SplitMix64 as its reference gives it (Steele, Lea and Flood;
    /// increment 0x9E3779B97F4A7C15, mix constants 0xBF58476D1CE4E5B9 and 0x94D049BB133111EB).
    @Test func seededGeneratorIsTheReferenceSplitMix64() {
        var rng = SeededRNG(seed: 0)
        #expect([rng.next(), rng.next(), rng.next(), rng.next()] == [
            0xE220_A839_7B1D_CDAF, 0x6E78_9E6A_A1B9_65F4, 0x06C4_5D18_8009_454F, 0xF88B_B8A8_724C_81EC,
        ])
    }
}
