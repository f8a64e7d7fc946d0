public import SessionTimeline

/// What verifying a rendered file found out about it: the facts it measured and every
/// problem, one sentence each.
///
/// It is `Encodable` so that `render-session verify --json` prints it as it is; the keys are
/// documented in docs/verify.md.
public struct VerificationReport: Sendable, Equatable, Encodable {
    /// The file verified, as given.
    public var path: String
    /// The format the file's content and extension say it is; `nil` when it could not be opened
    /// or is a container none of the output formats uses (AIFF, CAF, …).
    package var format: AudioFileFormat?
    /// What the decoder calls the file: `MPEG audio` or libsndfile's name for the container.
    package var formatName: String?
    /// Whether the file was judged with the lossy rules (a codec guard, −60 dBFS silence).
    package var isLossy: Bool
    /// The decoded sample rate; `nil` when the file could not be opened.
    package var sampleRate: SampleRate?
    /// The decoded channel count; `nil` when the file could not be opened.
    package var channelCount: ChannelCount?
    /// How many frames were decoded (up to where decoding stopped, if it failed).
    public var decodedFrames: Frames
    /// The timeline's length, when there was a timeline to check against.
    package var expectedFrames: Frames?
    /// The largest absolute sample decoded, in dBFS; `nil` when nothing was decoded or all was zero.
    package var peakDecibels: Double?
    /// Whether the file's length and the timeline's silences and items were checked: `false`
    /// without a timeline, or when the file's rate differs from the timeline's.
    package var checkedTimeline: Bool
    /// Every problem, in the order of the checks (format, length, decoding, clipping, then by frame).
    public var problems: [VerificationProblem]
    /// What the decoded file measured against the timeline's loudness target and ceiling, when
    /// the timeline has them and was checked.
    package var loudness: VerifiedLoudness?
    /// What the speech check heard (`verify --speech`), when it ran.
    package var speech: SpeechCheckSummary?

    package init(
        path: String,
        format: AudioFileFormat?,
        formatName: String?,
        isLossy: Bool,
        sampleRate: SampleRate?,
        channelCount: ChannelCount?,
        decodedFrames: Frames,
        expectedFrames: Frames?,
        peakDecibels: Double?,
        checkedTimeline: Bool,
        problems: [VerificationProblem],
        loudness: VerifiedLoudness? = nil
    ) {
        self.path = path
        self.format = format
        self.formatName = formatName
        self.isLossy = isLossy
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.decodedFrames = decodedFrames
        self.expectedFrames = expectedFrames
        self.peakDecibels = peakDecibels
        self.checkedTimeline = checkedTimeline
        self.problems = problems
        self.loudness = loudness
    }

    /// Whether no problem was found.
    public var isClean: Bool { problems.isEmpty }

    /// One line for a person: `verified out/x.mp3: 0 problems, 26,818,560 frames at 44100 Hz`.
    public var summary: String {
        let count = problems.count == 1 ? "1 problem" : "\(problems.count) problems"
        let rate = sampleRate.map { " at \($0)" } ?? ""
        let measured = loudness.map { ", \($0.summary)" } ?? ""
        let heard = speech.map { "; \($0.line)" } ?? ""
        return
            "verified \(path): \(count), \(VerificationText.grouped(decodedFrames.count)) frames\(rate)\(measured)\(heard)"
    }

    private enum CodingKeys: String, CodingKey {
        case file, format, formatName, lossy, sampleRate, channels, decodedFrames, expectedFrames, peakDbfs
        case timelineChecked, problems, ok, loudness, speech
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(path, forKey: .file)
        try container.encode(format?.rawValue, forKey: .format)
        try container.encode(formatName, forKey: .formatName)
        try container.encode(isLossy, forKey: .lossy)
        try container.encode(sampleRate?.hertz, forKey: .sampleRate)
        try container.encode(channelCount?.count, forKey: .channels)
        try container.encode(decodedFrames, forKey: .decodedFrames)
        try container.encode(expectedFrames, forKey: .expectedFrames)
        try container.encode(peakDecibels.map { ($0 * 100).rounded() / 100 }, forKey: .peakDbfs)
        try container.encode(checkedTimeline, forKey: .timelineChecked)
        try container.encode(problems, forKey: .problems)
        try container.encode(isClean, forKey: .ok)
        try container.encodeIfPresent(loudness, forKey: .loudness)
        try container.encodeIfPresent(speech, forKey: .speech)
    }
}

/// The loudness and true peak of a decoded file, and the target and ceiling it was rendered to.
package struct VerifiedLoudness: Sendable, Equatable, Encodable {
    /// The speech items' spans' integrated loudness, LUFS.
    package var speech: Double?
    /// The whole file's integrated loudness, LUFS.
    package var program: Double?
    /// The true peak as a player at 48 kHz meets it (``PlaybackPeakMeter``), dBTP.
    package var truePeak: Double?
    /// What the render measured of its speech and program, which the file must still measure.
    package var renderedSpeech: Double?
    package var renderedProgram: Double?
    /// The timeline's target, anchor and ceiling.
    package var target: Double
    package var anchor: LoudnessAnchor
    package var ceiling: Double
    /// Whether the speech is held to the target: the speech anchor's gain was found on the mix
    /// as limited (and decoded), so the speech measures the target (``TimelineLoudness/speechGain``).
    /// Timelines without that gain brought each clip to the target before the limiter, which
    /// takes some off peaky speech; their file is held to the speech the render measured alone.
    package var speechAnchored = false

    /// How far the anchored figure may be from the target, LU.
    package static let tolerance = 1.0

    /// `speech -16.1 LUFS, program -25.3 LUFS, -1.1 dBTP at 48 kHz`.
    var summary: String {
        var parts: [String] = []
        if let speech { parts.append("speech \(VerificationText.tenths(speech)) LUFS") }
        if let program { parts.append("program \(VerificationText.tenths(program)) LUFS") }
        if let truePeak { parts.append("\(VerificationText.tenths(truePeak)) dBTP at 48 kHz") }
        return parts.joined(separator: ", ")
    }

    /// The problems: a true peak over the ceiling; the anchor's figure (the program, or the speech
    /// when ``speechAnchored``) more than ``tolerance`` from the target; the speech or program
    /// more than ``tolerance`` from what the render measured of them (the file is not what was
    /// rendered).
    var problems: [VerificationProblem] {
        var problems: [VerificationProblem] = []
        if let truePeak, truePeak > ceiling + 0.005 {
            problems.append(
                VerificationProblem(
                    kind: .loudness,
                    message:
                        "the true peak as played at 48 kHz is \(VerificationText.tenths(truePeak)) dBTP, over the ceiling of \(VerificationText.tenths(ceiling)) dBTP"
                )
            )
        }
        func check(_ name: String, _ measured: Double?, against expected: Double?, _ what: String) {
            guard let measured, let expected, abs(measured - expected) > Self.tolerance else { return }
            let off = measured - expected
            problems.append(
                VerificationProblem(
                    kind: .loudness,
                    message:
                        "the \(name) loudness is \(VerificationText.tenths(measured)) LUFS, \(VerificationText.tenths(abs(off))) LU \(off < 0 ? "under" : "over") \(what) of \(VerificationText.tenths(expected)) LUFS (±\(Int(Self.tolerance)) LU)"
                )
            )
        }
        if anchor == .program {
            check("program", program, against: target, "the target")
        } else if speechAnchored {
            check("speech", speech, against: target, "the target")
        }
        check("speech", speech, against: renderedSpeech, "the render's")
        check("program", program, against: renderedProgram, "the render's")
        return problems
    }

    private enum CodingKeys: String, CodingKey {
        case speech, program, truePeak, target, anchor, ceiling, renderedSpeech, renderedProgram
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(speech.map(Timeline.rounded), forKey: .speech)
        try container.encode(program.map(Timeline.rounded), forKey: .program)
        try container.encode(truePeak.map(Timeline.rounded), forKey: .truePeak)
        try container.encode(target, forKey: .target)
        try container.encode(anchor, forKey: .anchor)
        try container.encode(ceiling, forKey: .ceiling)
        try container.encode(renderedSpeech, forKey: .renderedSpeech)
        try container.encode(renderedProgram, forKey: .renderedProgram)
    }
}

/// One thing wrong with a rendered file, with where it is and a sentence that says it.
public struct VerificationProblem: Sendable, Equatable, Encodable {
    /// What kind of problem it is; its raw value is the `code` in JSON.
    package enum Kind: String, Sendable, Equatable, Encodable {
        /// The file could not be decoded, or decoding stopped part of the way.
        case undecodable
        /// The container's own structure is broken where our decoder copes (a WAV's chunks, walked
        /// by ``RIFFStructure``): other players may not open the file at all.
        case structure
        /// The sample rate or channel count differs from the timeline's.
        case format
        /// The file decodes to another number of frames than the timeline's `totalFrames`.
        case length
        /// Samples at (lossless) or over (lossy) full scale.
        case clipping
        /// Sound where the timeline has silence, not next to any item.
        case notSilent
        /// An item that should sound is (nearly) silent.
        case missingSound
        /// An item's sound starts later than it should, before its start (in the silence before
        /// it), or runs on past its end into the silence after it.
        case misplacedSound
        /// The true peak over the timeline's ceiling, or the loudness off its target.
        case loudness
        /// A spoken item that does not say its text (`verify --speech`), or could not be heard.
        case speech
    }

    /// What kind of problem it is.
    package var kind: Kind
    /// Where it is: the first frame concerned, at the file's rate; `nil` for the file as a whole.
    public var frame: Frames?
    /// ``frame`` in seconds.
    package var seconds: Double?
    /// The timeline item concerned (its ``TimelineItem/index``), if any.
    package var itemIndex: Int?
    /// The item's name: a segment's id, an interjection's text, the bell's or a cue's name.
    package var itemName: String?
    /// The item's clip key, for segments and interjections.
    package var clipKey: String?
    /// How far off, in frames, where it can be told: positive for later or more, negative for
    /// earlier or fewer.
    package var offsetFrames: Int64?
    /// One sentence, without the file's name: `item 3 (segment "tie", clip 086967d1…) starts 300 ms late …`.
    public var message: String

    package init(
        kind: Kind,
        frame: Frames? = nil,
        seconds: Double? = nil,
        itemIndex: Int? = nil,
        itemName: String? = nil,
        clipKey: String? = nil,
        offsetFrames: Int64? = nil,
        message: String
    ) {
        self.kind = kind
        self.frame = frame
        self.seconds = seconds
        self.itemIndex = itemIndex
        self.itemName = itemName
        self.clipKey = clipKey
        self.offsetFrames = offsetFrames
        self.message = message
    }

    private enum CodingKeys: String, CodingKey {
        case code, frame, seconds, item, name, key, offsetFrames, message
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kind, forKey: .code)
        try container.encode(frame, forKey: .frame)
        try container.encode(seconds, forKey: .seconds)
        try container.encode(itemIndex, forKey: .item)
        try container.encode(itemName, forKey: .name)
        try container.encode(clipKey, forKey: .key)
        try container.encode(offsetFrames, forKey: .offsetFrames)
        try container.encode(message, forKey: .message)
    }
}
