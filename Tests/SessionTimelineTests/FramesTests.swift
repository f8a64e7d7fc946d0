import SessionTimeline
import Testing

@Suite("Seconds and frames")
struct FramesTests {
    @Test(
        "A time converts to round(seconds × rate) frames",
        arguments: [
            (270.0, 8_000, Int64(2_160_000)),
            (600.0, 22_050, 13_230_000),
            (350.5, 22_050, 7_728_525),
            (0.1, 48_000, 4_800),
            (1.0 / 3.0, 24_000, 8_000),
            (0.0, 44_100, 0),
            (86_400.0, 384_000, 33_177_600_000),
            // Halves round away from zero, never to even.
            (0.25, 1_002, 251),
            (0.75, 1_002, 752),
            (1.25, 1_002, 1_253),
        ]
    )
    func secondsToFrames(seconds: Double, rate: Int, expected: Int64) throws {
        let sampleRate = try #require(SampleRate(rate))
        #expect(sampleRate.frames(atSeconds: seconds) == Frames(expected), "\(seconds) s at \(rate) Hz")
    }

    @Test(
        "Times that cannot be frames are refused",
        arguments: [
            Double.nan, .infinity, -.infinity, -0.5, 1e300, 864_000.5,
        ]
    )
    func unrepresentableSeconds(seconds: Double) throws {
        let rate: SampleRate = 48_000
        #expect(rate.frames(atSeconds: seconds) == nil)
    }

    @Test(
        "A length converts between rates by rounding to nearest, halves up",
        arguments: [
            (Int64(22_050), 22_050, 24_000, Int64(24_000)),
            (1, 22_050, 24_000, 1),  // 1.088…
            (3, 44_100, 22_050, 2),  // 1.5 rounds up
            (5, 44_100, 22_050, 3),  // 2.5 rounds up
            (371_691, 22_050, 48_000, 809_123),  // 809_123.27
            (1_000, 48_000, 48_000, 1_000),
        ]
    )
    func rateConversion(frames: Int64, from source: Int, to target: Int, expected: Int64) throws {
        let sourceRate = try #require(SampleRate(source))
        let targetRate = try #require(SampleRate(target))
        #expect(targetRate.frames(converting: Frames(frames), from: sourceRate) == Frames(expected))
    }

    @Test("Sample rates outside 1000…768000 Hz do not exist", arguments: [0, 1, 999, -44_100, 768_001])
    func invalidRates(hertz: Int) {
        #expect(SampleRate(hertz) == nil)
    }
}

@Suite("The seeded generator")
struct SeededGeneratorTests {
    @Test("SplitMix64's sequence for seed 0 is the reference one")
    func referenceSequence() {
        var generator = SeededGenerator(seed: 0)
        #expect(generator.next() == 0xE220_A839_7B1D_CDAF)
        #expect(generator.next() == 0x6E78_9E6A_A1B9_65F4)
        #expect(generator.next() == 0x06C4_5D18_8009_454F)
    }

    @Test("The sequence for seed 42 is fixed")
    func fixedSequence() {
        var generator = SeededGenerator(seed: 42)
        #expect(
            [generator.next(), generator.next(), generator.next()] == [
                13_679_457_532_755_275_413, 2_949_826_092_126_892_291, 5_139_283_748_462_763_858,
            ]
        )
    }

    @Test("The largest seed wraps around without trapping")
    func largestSeed() {
        var generator = SeededGenerator(seed: .max)
        #expect([generator.next(), generator.next()] == [16_490_336_266_968_443_936, 16_834_447_057_089_888_969])
    }

    @Test("uniform(below:) draws the documented values")
    func uniformValues() {
        var generator = SeededGenerator(seed: 123)
        #expect((0..<8).map { _ in generator.uniform(below: 10) } == [5, 8, 0, 1, 2, 6, 4, 7])
    }

    @Test(
        "uniform(below: 1) is always 0 and uniform stays below its bound",
        arguments: [1, 2, 3, 21, 1_000_003] as [UInt64]
    )
    func uniformBounds(bound: UInt64) {
        var generator = SeededGenerator(seed: 99)
        for _ in 0..<1_000 {
            #expect(generator.uniform(below: bound) < bound)
        }
    }

    @Test("Random seeds fit in 53 bits, so JSON readers keep them exact")
    func randomSeedRange() {
        for _ in 0..<100 {
            #expect(SeededGenerator.randomSeed() < 1 << 53)
        }
    }
}

@Suite("The one sample-rate rule")
struct SessionSampleRateTests {
    @Test(
        "The rate asked for, else the first clip had, in speaking order; else none",
        arguments: [
            (SampleRate?(44_100), [SampleRate?(22_050)], SampleRate?(44_100)),
            (nil, [22_050, 24_000], 22_050),
            (nil, [nil, 24_000, 22_050], 24_000),
            (nil, [nil, nil], nil),
            (nil, [], nil),
        ] as [(SampleRate?, [SampleRate?], SampleRate?)]
    )
    func rule(requested: SampleRate?, clips: [SampleRate?], expected: SampleRate?) {
        #expect(SampleRate.forSession(requested: requested, clipRates: clips) == expected)
    }
}
