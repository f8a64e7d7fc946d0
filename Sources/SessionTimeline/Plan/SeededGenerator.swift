/// SplitMix64 (Steele, Lea and Flood, 2014): the generator behind every random choice in a render.
///
/// Its sequence for a seed is fixed forever, on every platform; docs/timing.md writes the
/// algorithm down, and a test pins the first values for a known seed. Choices are derived with
/// ``uniform(below:)``, never with the standard library's `random(in:using:)`, whose mapping
/// from generator output is not promised to stay the same.
package struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// Creates a generator whose sequence is determined by `seed`.
    package init(seed: UInt64) {
        state = seed
    }

    /// The next 64 random bits.
    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z &>> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z &>> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z &>> 31)
    }

    /// A uniform integer in `0..<bound`, by rejection: values of `next()` at or above the largest
    /// multiple of `bound` that fits in 2^64 are discarded, and the rest are taken modulo `bound`.
    package mutating func uniform(below bound: UInt64) -> UInt64 {
        precondition(bound > 0, "uniform(below:) needs a positive bound")
        let excess = (UInt64.max % bound &+ 1) % bound  // 2^64 mod bound
        while true {
            let value = next()
            if value <= UInt64.max - excess {
                return value % bound
            }
        }
    }

    /// The seed of one session in a batch: the first output of a generator seeded with
    /// `base XOR FNV-1a-64(label)`, limited to 53 bits. `label` names the session (its script id,
    /// and `#v2` and so on for variants), so every session draws differently but reproducibly.
    package static func derive(base: UInt64, label: String) -> UInt64 {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in label.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        }
        var generator = SeededGenerator(seed: base ^ hash)
        return generator.next() & ((1 << 53) - 1)
    }

    /// A seed for a render that was given none: uniform in `0..<2^53`, so that it survives a
    /// round trip through JSON readers that hold numbers as doubles.
    package static func randomSeed() -> UInt64 {
        var system = SystemRandomNumberGenerator()
        return system.next() & ((1 << 53) - 1)
    }
}

/// An interjection with its random choices made: when it is planned to start and what it says.
package struct ResolvedInterjection: Sendable, Equatable {
    /// The interjection's index in the script.
    package var interjectionIndex: Int
    /// The planned start, in seconds.
    package var plannedSeconds: Double
    /// The chosen option's index in `textOptions`.
    package var optionIndex: Int
    /// The chosen text.
    package var text: String

    package init(interjectionIndex: Int, plannedSeconds: Double, optionIndex: Int, text: String) {
        self.interjectionIndex = interjectionIndex
        self.plannedSeconds = plannedSeconds
        self.optionIndex = optionIndex
        self.text = text
    }
}

extension GuidedSession {
    /// Makes every interjection's random choices with a generator seeded by `seed`.
    ///
    /// For each interjection in order: if the window `[windowStartSeconds, windowEndSeconds]`
    /// holds `k ≥ 1` whole seconds, the start is the first of them plus `uniform(below: k)`;
    /// otherwise (a window inside one second) it is `windowStartSeconds` and no number is drawn.
    /// Then the text is `textOptions[uniform(below: textOptions.count)]`.
    package func resolveInterjections(seed: UInt64) -> [ResolvedInterjection] {
        var generator = SeededGenerator(seed: seed)
        return interjections.enumerated().map { index, interjection in
            let first = interjection.windowStartSeconds.rounded(.up)
            let last = interjection.windowEndSeconds.rounded(.down)
            var planned = interjection.windowStartSeconds
            if first <= last {
                let count = UInt64(last - first) + 1
                planned = first + Double(generator.uniform(below: count))
            }
            let option = Int(generator.uniform(below: UInt64(interjection.textOptions.count)))
            return ResolvedInterjection(
                interjectionIndex: index,
                plannedSeconds: planned,
                optionIndex: option,
                text: interjection.textOptions[option]
            )
        }
    }
}
