import Foundation
internal import SessionAudio

/// Sounds' measurements with their loudness, kept from one run to the next. A sound's loudness
/// and true peak take a full decode through two meters (for the built-in rain bed and gong, about
/// 20 ms, a tenth of a layered render), and every render that plays a sound measured it again.
///
/// Each is a ``LoudnessSidecar`` with `truePeak`, named by the SHA-256 of the sound's bytes,
/// `{sha256}.loudness.json`, in `measurements/` beside the default sound library. It is trusted
/// only for the exact bytes it names and only when the file's header agrees with its rate and
/// channels; a sound that changed is measured again.
enum SoundMeasurements {
    /// The folder the sidecars are kept in: `…/render-session/sounds/measurements`.
    static func folder(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        let sounds = (SoundLibrary.defaultFolder(environment: environment) as NSString).deletingLastPathComponent
        return sounds + "/measurements"
    }

    /// The sound at `path` measured with its loudness and true peak: from its sidecar in `folder`
    /// when one describes the file's bytes and agrees with a scan of it, otherwise by decoding it in
    /// full (``AudioFileDecoder/measureLoudness(path:asSound:levelsSpeech:)``), and then
    /// kept there (when the file did not change meanwhile and the folder can be written).
    /// `library` is the folder a name found the sound in, which every open checks it lies inside.
    static func measureWithLoudness(
        path: String,
        inside library: String? = nil,
        in folder: String = folder()
    ) throws(AudioError) -> AudioMeasurement {
        guard let before = ClipFingerprint(path: path, inside: library) else {
            return try AudioFileDecoder.measureLoudness(path: path, inside: library, asSound: true)
        }
        let sidecarPath = (folder as NSString).appendingPathComponent("\(before.sha256).loudness.json")
        if let sidecar = LoudnessSidecar.read(from: sidecarPath), sidecar.describes(before),
            let truePeak = sidecar.truePeak, let loudestMomentary = sidecar.maxMomentary,
            let strikeFrames = sidecar.strikeFrames
        {
            // Its length is that of a full decode of these very bytes (a clip's sidecar is checked
            // against a scan, but a sound's scan is a full decode, the work the sidecar saves);
            // the file's own header gives the rest, and a render still stops at a length that
            // is not the planned one.
            var known = try AudioFileDecoder.measure(path: path, inside: library, decodedFrameCount: sidecar.frames)
            if sidecar.agrees(with: known) {
                known.loudness = sidecar.integratedLoudness
                known.truePeak = truePeak
                known.loudestMomentary = loudestMomentary
                known.strikeFrames = strikeFrames
                return known
            }
        }
        let measurement = try AudioFileDecoder.measureLoudness(path: path, inside: library, asSound: true)
        if ClipFingerprint(path: path, inside: library) == before {
            try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            LoudnessSidecar(measurement, of: before, asSound: true).write(to: sidecarPath)
        }
        return measurement
    }
}
