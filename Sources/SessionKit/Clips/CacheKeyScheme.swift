/// How a clip's cache key is made from its text, voice and speed.
///
/// Two apps fill caches in two layouts; naming the layout lets either cache be used as it is,
/// without renaming a file. docs/cache.md describes both.
public enum CacheKeyScheme: String, Sendable, CaseIterable, Codable {
    /// SHA-256 of `text + voice + speed` : the seed app's
    /// `TTSAudioCache` layout, and the default. Clips of different voices and speeds never collide.
    case textVoiceSpeed = "voice"
    /// SHA-256 of the text alone : the stretching app's layout. It holds
    /// one voice per folder, so a clip made in another voice or speed is reused as it is.
    case text

    /// The key of `text` spoken by `voice` at `speed` under this scheme.
    package func key(text: String, voice: String, speed: Double) -> String {
        switch self {
        case .textVoiceSpeed: ClipCache.key(text: text, voice: voice, speed: speed)
        case .text: ClipCache.key(text: text)
        }
    }
}
