internal import Crypto
public import Foundation
internal import SessionTimeline

/// The folder of synthesized clips: `{key}.mp3`, where the key names the text, voice and speed.
///
/// key = lowercase hex SHA-256 of the UTF-8 bytes of `text + voice + speed`, the speed written
/// as Swift writes a `Double` (`1.0`, `1.25`). The same key the app's cache uses, so a clip
/// made anywhere serves everywhere. A folder in the stretching app's layout is keyed by the text
/// alone (``CacheKeyScheme/text``). docs/cache.md describes the layout.
public struct ClipCache: Sendable {
    /// The cache folder.
    public let directory: String

    public init(directory: String) {
        self.directory = directory
    }

    /// `$XDG_CACHE_HOME/render-session/tts`, else `~/.cache/render-session/tts`.
    public static func defaultDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let base = environment["XDG_CACHE_HOME"], base.hasPrefix("/") {
            return base + "/render-session/tts"
        }
        let home = environment["HOME"] ?? FileManager.default.homeDirectoryForCurrentUser.path
        return home + "/.cache/render-session/tts"
    }

    /// The cache key of `text` spoken by `voice` at `speed`.
    package static func key(text: String, voice: String, speed: Double) -> String {
        hexDigest(of: text + voice + "\(speed)")
    }

    /// The cache key of `text` alone, as the stretching app names its clips (``CacheKeyScheme/text``).
    package static func key(text: String) -> String {
        hexDigest(of: text)
    }

    /// Lowercase hex SHA-256 of the UTF-8 bytes of `string`.
    private static func hexDigest(of string: String) -> String {
        let digest = SHA256.hash(data: Data(string.utf8))
        let hexDigits = Array("0123456789abcdef".utf8)
        var hex: [UInt8] = []
        hex.reserveCapacity(64)
        for byte in digest {
            hex.append(hexDigits[Int(byte >> 4)])
            hex.append(hexDigits[Int(byte & 0x0F)])
        }
        return String(decoding: hex, as: UTF8.self)
    }

    /// Where the clip with `key` is stored.
    package func path(forKey key: String) -> String {
        (directory as NSString).appendingPathComponent("\(key).mp3")
    }

    /// A clip the cache should hold: its text, key and path.
    public struct Entry: Sendable, Equatable {
        /// The spoken text.
        public let text: String
        /// The cache key.
        public let key: String
        /// Where the clip is, or would be.
        public let path: String
    }

    /// The entry for `text` spoken by `voice` at `speed`, keyed by `scheme`.
    package func entry(
        text: String,
        voice: String,
        speed: Double,
        scheme: CacheKeyScheme = .textVoiceSpeed
    ) -> Entry {
        let key = scheme.key(text: text, voice: voice, speed: speed)
        return Entry(text: text, key: key, path: path(forKey: key))
    }
}
