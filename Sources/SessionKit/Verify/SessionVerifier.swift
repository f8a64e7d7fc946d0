import Foundation
import SessionAudio
package import SessionTimeline

/// Checks a rendered audio file against the timeline it was rendered from: its length, that its
/// silences are silent, that every item's sound is where the timeline puts it, and that nothing
/// clips. docs/verify.md describes each check and its thresholds.
///
/// The file is decoded block by block and judged as it goes, so memory depends on the timeline's
/// item count, not on the file's length.
package enum SessionVerifier {
    /// The frames decoded at a time.
    static let blockFrames = 16_384

    /// Verifies the audio file at `path` against `timeline`, or, without one, checks only that it
    /// decodes and does not clip.
    ///
    /// Problems with the file (it does not decode, its length, its silences, clipping) are lines in
    /// the report, never errors: a file that cannot be decoded at all is one `undecodable` problem.
    /// - Throws: ``SessionError/Code-swift.struct/unreadableAudio`` when there is no file to read (no
    ///   such file, a folder, permission denied); ``SessionError/cancelled`` when the task is cancelled.
    /// - Parameters:
    ///   - checkingStamp: whether to refuse a timeline whose ``Timeline/audioFile`` describes
    ///     another file (``refuseForeign(_:named:for:doing:)``). A render verifying what it has
    ///     just written and stamped passes `false`: the check cannot fail there, and it reads the
    ///     whole file.
    ///   - sources: where the clips and sounds of a timeline read from a file are; `nil` for a
    ///     timeline a render holds, whose sources are their files' paths.
    package static func verify(
        file path: String,
        timeline: Timeline?,
        timelineName: String? = nil,
        checkingStamp: Bool = true,
        sources: SourceFolders? = nil
    ) throws(SessionError) -> VerificationReport {
        if let reason = unreadableReason(path) {
            throw SessionError(.unreadableAudio, "Cannot verify \(path): \(reason)")
        }
        if let encoding = timeline?.encoding, let recorded = AudioFileFormat(codec: encoding.codec),
            let named = AudioFileFormat(path: path), !recorded.isSameContainer(as: named)
        {
            // A timeline of another render (the MP3's beside the Opus file) would judge the file
            // by the wrong rate and length: refused, naming both.
            throw SessionError(
                .unreadableTimeline,
                "Cannot verify \(path) against \(timelineName ?? "its timeline"): the timeline is of a .\(recorded.fileExtension) file (\(encoding.codec) at \(timeline?.sampleRate.description ?? "")), not a .\(named.fileExtension) one"
            )
        }
        if let timeline, checkingStamp {
            try refuseForeign(timeline, named: timelineName ?? "its timeline", for: path, doing: "verify")
        }
        let decoder: AudioFileDecoder
        do {
            decoder = try AudioFileDecoder(path: path)
        } catch {
            let format = AudioFileFormat(path: path)
            return VerificationReport(
                path: path,
                format: format,
                formatName: nil,
                isLossy: format?.isLossy ?? false,
                sampleRate: nil,
                channelCount: nil,
                decodedFrames: .zero,
                expectedFrames: timeline?.totalFrames,
                peakDecibels: nil,
                checkedTimeline: false,
                problems: [VerificationProblem(kind: .undecodable, message: "cannot be decoded: \(error.reason)")]
            )
        }
        let format = format(named: decoder.formatName, path: path)
        let rules = VerificationRules(format: format, sampleRate: decoder.sampleRate)
        var problems: [VerificationProblem] = []
        if format == .wav {
            // libsndfile decodes a WAV whose `data` lies inside a declared `LIST`; other readers do not.
            let structure: String?
            do {
                structure = try RIFFStructure.problem(path: path)
            } catch {
                structure = "cannot be walked: \(error.reason)"
            }
            if let structure {
                problems.append(
                    VerificationProblem(kind: .structure, message: "is not a well-formed WAV: \(structure)")
                )
            }
        }
        // Positions mean nothing at another rate: then only decoding and clipping are checked.
        var placed = timeline
        if let timeline {
            if timeline.sampleRate != decoder.sampleRate {
                placed = nil
                problems.append(
                    VerificationProblem(
                        kind: .format,
                        message:
                            "is at \(decoder.sampleRate), the timeline at \(timeline.sampleRate); its length and placement were not checked"
                    )
                )
            }
            if timeline.channelCount != decoder.channelCount {
                problems.append(
                    VerificationProblem(
                        kind: .format,
                        message:
                            "has \(decoder.channelCount.count) channels, the timeline \(timeline.channelCount.count)"
                    )
                )
            }
        }

        var scan = SignalScan(timeline: placed, rules: rules, sampleRate: decoder.sampleRate)
        // With a loudness target, the decoded file's loudness and its true peak as played.
        var meters: (loudness: SessionMeters, peak: PlaybackPeakMeter)?
        if let placed, placed.loudness != nil {
            meters = try? (
                SessionMeters(
                    sampleRate: decoder.sampleRate,
                    channelCount: decoder.channelCount,
                    items: placed.items,
                    phaseStarts: placed.phases.map(\.startFrame)
                ),
                PlaybackPeakMeter(sampleRate: decoder.sampleRate, channelCount: decoder.channelCount)
            )
        }
        var peakFailure: AudioError?
        var decodingProblem: VerificationProblem?
        var buffer: [Float] = []
        let channels = decoder.channelCount.count
        while true {
            if Task.isCancelled { throw SessionError.cancelled }
            let frames: Int
            do {
                frames = try decoder.read(into: &buffer, maximumFrames: blockFrames)
            } catch {
                let at = Frames(scan.position)
                decodingProblem = VerificationProblem(
                    kind: .undecodable,
                    frame: at,
                    seconds: decoder.sampleRate.seconds(of: at),
                    message:
                        "decoding stopped at \(VerificationText.place(at, rate: decoder.sampleRate)): \(error.reason)"
                )
                break
            }
            if frames == 0 { break }
            scan.add(buffer.span, frames: frames, channelCount: channels)
            if let meters {
                meters.loudness.add(buffer, frames: frames)
                do {
                    try meters.peak.add(buffer, frames: frames)
                } catch {
                    peakFailure = error
                }
            }
        }
        scan.finish()

        let decoded = Frames(scan.position)
        let judge = Judgement(
            scan: scan,
            rules: rules,
            rate: decoder.sampleRate,
            decodedFrames: decoded,
            sources: sources
        )
        if let placed { problems += judge.lengthProblems(timeline: placed) }
        if let decodingProblem { problems.append(decodingProblem) }
        problems += judge.clippingProblems(timeline: placed)
        if let placed { problems += judge.placementProblems(timeline: placed) }
        var loudness: VerifiedLoudness?
        if let meters, let target = placed?.loudness, decodingProblem == nil {
            let measured = meters.loudness.loudness
            let peak = peakFailure == nil ? try? meters.peak.finish() : nil
            let verified = VerifiedLoudness(
                speech: measured.speech,
                program: measured.program,
                truePeak: peak.flatMap { $0.isFinite ? $0 : nil },
                renderedSpeech: target.speech,
                renderedProgram: target.program,
                target: target.target,
                anchor: target.anchor,
                ceiling: target.ceiling,
                speechAnchored: target.anchor == .speech && target.speechGain != nil
            )
            loudness = verified
            problems += verified.problems
        }
        return VerificationReport(
            path: path,
            format: format,
            formatName: decoder.formatName,
            isLossy: rules.isLossy,
            sampleRate: decoder.sampleRate,
            channelCount: decoder.channelCount,
            decodedFrames: decoded,
            expectedFrames: timeline?.totalFrames,
            peakDecibels: scan.peak > 0 ? 20 * log10(Double(scan.peak)) : nil,
            checkedTimeline: placed != nil,
            problems: problems,
            loudness: loudness
        )
    }

    /// Refuses `timeline` for the file at `path` when the timeline records another file (its
    /// ``Timeline/audioFile`` stamp: the size, then the SHA-256), naming the timeline, the file and
    /// the session the timeline belongs to. A timeline without a stamp (written before stamps
    /// were, or alongside a stream) is taken as it is: the length checks that follow still apply.
    /// - Parameter verb: what was asked of the file, for the error (`verify`, `draw`, `show`).
    /// - Throws: ``SessionError/Code-swift.struct/unreadableTimeline``; `unreadableAudio` when the
    ///   file cannot be read to hash it.
    package static func refuseForeign(
        _ timeline: Timeline,
        named timelineName: String,
        for path: String,
        doing verb: String
    ) throws(SessionError) {
        guard let recorded = timeline.audioFile else { return }
        let found: AudioFileStamp
        switch BatchManifest.stamp(path, followingLinks: true) {
        case .success(let stamp): found = stamp
        case .failure(let unreadable):
            throw SessionError(.unreadableAudio, "Cannot \(verb) \(path): \(unreadable.reason)")
        }
        guard found != recorded else { return }
        func described(_ stamp: AudioFileStamp) -> String {
            "\(VerificationText.grouped(stamp.bytes)) bytes, SHA-256 \(stamp.sha256.prefix(16))…"
        }
        throw SessionError(
            .unreadableTimeline,
            "Cannot \(verb) \(path): \(timelineName) describes another file, rendered from session \"\(printable(timeline.scriptId, limit: 80))\" (\"\(printable(timeline.title, limit: 80))\", seed \(timeline.seed)) to \(described(recorded)), not this one (\(described(found))); give the timeline written with it, or render it again"
        )
    }

    /// A file's timeline by convention: `out/x.mp3` → `out/x.mp3.timeline.json`, the extension
    /// kept so that the timelines of `x.mp3` and `x.opus` side by side never collide.
    package static func sidecarTimelinePath(for audioPath: String) -> String {
        audioPath + ".timeline.json"
    }

    /// The convention before the extension was kept, `out/x.timeline.json`: still read when
    /// there is no ``sidecarTimelinePath(for:)``, so that older folders verify.
    package static func legacySidecarTimelinePath(for audioPath: String) -> String {
        let slash = audioPath.lastIndex(of: "/").map { audioPath.index(after: $0) } ?? audioPath.startIndex
        let name = audioPath[slash...]
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return audioPath + ".timeline.json" }
        return String(audioPath[..<dot]) + ".timeline.json"
    }

    /// Reads a timeline JSON file (docs/timeline.md, schema version 1 or 2).
    /// - Throws: ``SessionError/Code-swift.struct/unreadableTimeline`` naming the file and the cause.
    package static func readTimeline(at path: String) throws(SessionError) -> Timeline {
        try decodeTimeline(try timelineData(at: path), name: path)
    }

    /// The largest timeline or queue file read: a 24-hour spoken session's, words and all, is
    /// about 10 MiB. A larger one (a planted 3 GB file) is refused before it is read to its end.
    package static let maximumTimelineBytes = 32 << 20

    /// The bytes of the timeline file at `path`, or the error ``readTimeline(at:)`` gives for it:
    /// read in pieces to the end, as a script is (a FIFO or `/dev/fd/N` too), up to
    /// ``maximumTimelineBytes``.
    static func timelineData(at path: String) throws(SessionError) -> Data {
        let file: FileDescriptor
        do {
            file = try FileDescriptor.open(path, .readOnly)
        } catch {
            throw SessionError(
                .unreadableTimeline,
                "Cannot read timeline \(path): \(FileProblem.describeUnreadable(path))",
                underlyingError: error
            )
        }
        return try timelineData(from: file, name: path)
    }

    /// The bytes left in `file`, up to ``maximumTimelineBytes``; `name` stands for it in errors.
    static func timelineData(from file: borrowing FileDescriptor, name: String) throws(SessionError) -> Data {
        do {
            return try file.readToEnd(limit: maximumTimelineBytes)
        } catch {
            let reason =
                switch error {
                case .tooLarge(let limit): "it is larger than \(limit >> 20) MiB, the most a timeline may be"
                case .failed(let error): FileProblem.describe(error, path: name)
                }
            throw SessionError(.unreadableTimeline, "Cannot read timeline \(name): \(reason)", underlyingError: error)
        }
    }

    /// The timeline in `data`, read from the file called `name` in messages.
    static func decodeTimeline(_ data: Data, name: String) throws(SessionError) -> Timeline {
        do {
            return try JSONDecoder().decode(Timeline.self, from: data)
        } catch {
            throw SessionError(
                .unreadableTimeline,
                "Cannot read timeline \(name): \(JSONProblem.describe(error))",
                underlyingError: error
            )
        }
    }

    /// Why `path` cannot be read at all, or `nil` if it can be tried.
    private static func unreadableReason(_ path: String) -> String? {
        var isDirectory: ObjCBool = false
        if !FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) { return "no such file" }
        if isDirectory.boolValue { return "it is a directory" }
        if !FileManager.default.isReadableFile(atPath: path) { return "permission denied" }
        return nil
    }

    /// The format the decoder found, told apart by extension only where the container is shared
    /// (Ogg holds Opus and Vorbis, MP4 is M4A or M4B); `nil` for a container no output format uses.
    static func format(named formatName: String, path: String) -> AudioFileFormat? {
        let name = formatName.uppercased()
        if formatName == "MPEG audio" { return .mp3 }
        if name.hasPrefix("FLAC") { return .flac }
        if name.hasPrefix("OGG") { return AudioFileFormat(path: path) == .opus ? .opus : .vorbis }
        if name.hasPrefix("WAV") || name.hasPrefix("RF64") || name.hasPrefix("W64") { return .wav }
        if name == "MP4" { return AudioFileFormat(path: path) == .m4b ? .m4b : .m4a }
        return nil
    }
}
