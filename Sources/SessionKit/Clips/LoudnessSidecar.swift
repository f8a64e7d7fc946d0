internal import Crypto
import Foundation
internal import SessionAudio
package import SessionTimeline

/// What a clip's loudness sidecar, `{key}.loudness.json` beside `{key}.mp3`, records: the clip's
/// measurement from a full decode, and the size and SHA-256 of the exact bytes measured, so that a
/// sidecar that does not describe the clip now in the cache is recognised and measured again.
///
/// ```json
/// {
///   "bytes" : 14421,
///   "channels" : 1,
///   "frames" : 57856,
///   "gapless" : true,
///   "integratedLoudness" : -17.25,
///   "leveledLoudness" : -18.61,
///   "sampleRate" : 22050,
///   "sha256" : "9c1e…",
///   "version" : 2
/// }
/// ```
/// `integratedLoudness` is `null` when nothing in the clip passes the measurement's gates, and
/// `leveledLoudness` (the clip through the speech leveler) then too. Version 1 had no
/// `leveledLoudness`; such a sidecar is measured again. A sound's sidecar (``SoundMeasurements``)
/// has the same keys, `truePeak` (dBTP), `maxMomentary` (its loudest 400 ms, LUFS) and
/// `strikeFrames` (its strike's length), each `null` for silence, and no speech leveling; one
/// without `maxMomentary` or `strikeFrames` is measured again.
/// docs/cache.md describes when sidecars are written and trusted.
struct LoudnessSidecar: ClipSidecar, Equatable {
    /// The format's version; a sidecar with another is measured again.
    static let version = 2
    /// The largest sidecar read: one is about 400 bytes.
    static let maximumBytes = 16 * 1_024

    var version: Int
    /// The clip file's size in bytes.
    var bytes: Int
    /// Lowercase hex SHA-256 of the clip file.
    var sha256: String
    var sampleRate: SampleRate
    var channels: ChannelCount
    /// The clip's length in frames, as decoded.
    var frames: Frames
    var gapless: Bool
    /// EBU R128 integrated loudness in LUFS; `nil` when nothing passed the gates.
    var integratedLoudness: Double?
    /// The integrated loudness through the speech leveler, LUFS; `nil` when nothing passed the gates.
    var leveledLoudness: Double?
    /// A sound's true peak, dBTP: `.some(nil)` for silence, `nil` when not measured (a clip's).
    var truePeak: Double??
    /// A sound's loudest 400 ms, LUFS: `.some(nil)` for silence, `nil` when not measured (a clip's).
    var maxMomentary: Double??
    /// A sound's strike, frames: `.some(nil)` for silence, `nil` when not measured (a clip's).
    var strikeFrames: Frames??

    init(_ measurement: AudioMeasurement, of clip: ClipFingerprint, asSound: Bool = false) {
        version = Self.version
        bytes = clip.bytes
        sha256 = clip.sha256
        sampleRate = measurement.sampleRate
        channels = measurement.channelCount
        frames = measurement.frameCount
        gapless = measurement.gapless
        integratedLoudness = measurement.loudness
        leveledLoudness = measurement.leveledLoudness
        truePeak = asSound ? .some(measurement.truePeak) : nil
        maxMomentary = asSound ? .some(measurement.loudestMomentary) : nil
        strikeFrames = asSound ? .some(measurement.strikeFrames) : nil
    }

    private enum CodingKeys: String, CodingKey {
        case version, bytes, sha256, sampleRate, channels, frames, gapless, integratedLoudness, leveledLoudness
        case truePeak, maxMomentary, strikeFrames
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        version = try container.decode(Int.self, forKey: .version)
        bytes = try container.decode(Int.self, forKey: .bytes)
        sha256 = try container.decode(String.self, forKey: .sha256)
        sampleRate = try container.decode(SampleRate.self, forKey: .sampleRate)
        channels = try container.decode(ChannelCount.self, forKey: .channels)
        frames = try container.decode(Frames.self, forKey: .frames)
        gapless = try container.decode(Bool.self, forKey: .gapless)
        // Present, as a number or null: a missing key is a damaged sidecar, not "not measured".
        integratedLoudness =
            try container.decodeNil(forKey: .integratedLoudness)
            ? nil : try container.decode(Double.self, forKey: .integratedLoudness)
        leveledLoudness =
            try container.decodeNil(forKey: .leveledLoudness)
            ? nil : try container.decode(Double.self, forKey: .leveledLoudness)
        truePeak = try Self.decodeIfPresent(.truePeak, from: container)
        maxMomentary = try Self.decodeIfPresent(.maxMomentary, from: container)
        if container.contains(.strikeFrames) {
            strikeFrames = .some(try container.decodeIfPresent(Frames.self, forKey: .strikeFrames))
        }
    }

    /// A sound's key: absent (`nil`: not measured), or a number or null (`.some`).
    private static func decodeIfPresent(
        _ key: CodingKeys,
        from container: KeyedDecodingContainer<CodingKeys>
    ) throws -> Double?? {
        guard container.contains(key) else { return nil }
        return .some(try container.decodeNil(forKey: key) ? nil : try container.decode(Double.self, forKey: key))
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(version, forKey: .version)
        try container.encode(bytes, forKey: .bytes)
        try container.encode(sha256, forKey: .sha256)
        try container.encode(sampleRate, forKey: .sampleRate)
        try container.encode(channels, forKey: .channels)
        try container.encode(frames, forKey: .frames)
        try container.encode(gapless, forKey: .gapless)
        var values = [(integratedLoudness, CodingKeys.integratedLoudness), (leveledLoudness, .leveledLoudness)]
        if let truePeak { values.append((truePeak, .truePeak)) }
        if let maxMomentary { values.append((maxMomentary, .maxMomentary)) }
        if let strikeFrames {
            if let frames = strikeFrames {
                try container.encode(frames, forKey: .strikeFrames)
            } else {
                try container.encodeNil(forKey: .strikeFrames)
            }
        }
        for (value, key) in values {
            if let value { try container.encode(value, forKey: key) } else { try container.encodeNil(forKey: key) }
        }
    }

    /// The integrated loudness a clip can have, in LUFS: BS.1770's absolute gate is −70 LUFS, and
    /// a full-scale square wave measures about +3.
    static let plausibleLoudness: ClosedRange<Double> = -70...10

    /// The true peak a sound's sidecar may claim, in dBTP: what a decoded file can hold (a float
    /// file may go over full scale).
    static let plausibleTruePeak: ClosedRange<Double> = -200...40

    /// Whether the values are sane: a loudness that is finite and within ``plausibleLoudness``,
    /// a true peak within ``plausibleTruePeak``, frames that are there. A sidecar whose are not is
    /// not read (``ClipSidecar/read(from:)``, which also caps its size and follows no link).
    var isPlausible: Bool {
        bytes >= 0 && frames > .zero
            && integratedLoudness.map(Self.plausibleLoudness.contains) ?? true
            && leveledLoudness.map(Self.plausibleLoudness.contains) ?? true
            && truePeak.map({ $0.map(Self.plausibleTruePeak.contains) ?? true }) ?? true
            && maxMomentary.map({ $0.map(Self.plausibleLoudness.contains) ?? true }) ?? true
            && strikeFrames.map({ $0.map { $0 >= .zero && $0 <= frames } ?? true }) ?? true
    }

    /// Whether this sidecar's format and length are what a scan of its clip found
    /// (``AudioFileDecoder/measure(path:)``): a sidecar is only a cache of a measurement, and a
    /// rate, channel count or length it claims never overrides the clip's own.
    func agrees(with scan: AudioMeasurement) -> Bool {
        sampleRate == scan.sampleRate && channels == scan.channelCount && frames == scan.frameCount
            && gapless == scan.gapless
    }

    /// Whether this sidecar was measured from exactly `clip`'s bytes.
    func describes(_ clip: ClipFingerprint) -> Bool {
        bytes == clip.bytes && sha256 == clip.sha256
    }

    /// The source this sidecar describes, as the clip at `path`.
    func source(path: String) -> AudioSourceInfo {
        var source = AudioSourceInfo(
            path: path,
            sampleRate: sampleRate,
            frameCount: frames,
            gapless: gapless,
            loudness: integratedLoudness,
            leveledLoudness: leveledLoudness
        )
        source.channelCount = channels
        return source
    }
}

/// The size and SHA-256 of a clip's or a sound's bytes.
struct ClipFingerprint: Equatable {
    var bytes: Int
    /// Lowercase hex.
    var sha256: String

    init(_ data: Data) {
        bytes = data.count
        let hexDigits = Array("0123456789abcdef".utf8)
        var hex: [UInt8] = []
        hex.reserveCapacity(64)
        for byte in SHA256.hash(data: data) {
            hex.append(hexDigits[Int(byte >> 4)])
            hex.append(hexDigits[Int(byte & 0x0F)])
        }
        sha256 = String(decoding: hex, as: UTF8.self)
    }

    /// The fingerprint of the regular file at `path`, or `nil` if it cannot be read or is not one
    /// (a FIFO is not waited on), or that does not lie inside `folder` once open. It is read
    /// 1 MiB at a time: a sound can be a long bed.
    init?(path: String, inside folder: String? = nil) {
        guard case .success(let stamp) = BatchManifest.stamp(path, followingLinks: true, inside: folder) else {
            return nil
        }
        bytes = Int(stamp.bytes)
        sha256 = stamp.sha256
    }
}

extension ClipCache {
    /// Where the loudness sidecar of the clip with `key` is stored: `{key}.loudness.json`.
    package func loudnessPath(forKey key: String) -> String {
        (directory as NSString).appendingPathComponent("\(key).loudness.json")
    }

    /// Measures the entry's file with its loudness: from its sidecar if that describes the file's
    /// exact bytes and agrees with a scan of the file (its rate, channels and length; the scan
    /// also refuses a file cut short), otherwise by decoding it in full
    /// (``AudioFileDecoder/measureLoudness(path:)``) and writing a new sidecar.
    /// - Returns: `nil` if there is no file.
    /// - Throws: ``SessionError`` (`unusableClips`) for a file that is not a usable clip.
    package func measureWithLoudness(_ entry: Entry) throws(SessionError) -> AudioSourceInfo? {
        do {
            return try measureFileWithLoudness(entry)
        } catch {
            throw SessionError(.unusableClips, wrapping: error)
        }
    }

    func measureFileWithLoudness(_ entry: Entry) throws(AudioError) -> AudioSourceInfo? {
        guard try Self.checkEntry(entry) else { return nil }
        let sidecarPath = loudnessPath(forKey: entry.key)
        let before = ClipFingerprint(path: entry.path)
        if let before, let sidecar = LoudnessSidecar.read(from: sidecarPath), sidecar.describes(before) {
            // The scan, not the sidecar, says whether the clip is whole and how long it is.
            if sidecar.agrees(with: try Self.checkedMP3(AudioFileDecoder.measure(path: entry.path), entry)) {
                return sidecar.source(path: entry.path)
            }
        }
        let measurement = try Self.checkedMP3(
            AudioFileDecoder.measureLoudness(path: entry.path, levelsSpeech: true),
            entry
        )
        // Only if the clip did not change while it was measured (another process replacing it).
        if let before, ClipFingerprint(path: entry.path) == before {
            LoudnessSidecar(measurement, of: before).write(to: sidecarPath)
        }
        return AudioSourceInfo(measurement, path: entry.path)
    }

}
