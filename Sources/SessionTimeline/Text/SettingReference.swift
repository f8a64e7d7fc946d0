/// A setting that a library message refers to. The library words it ("the bit rate"); the command
/// names it as its users know it (`--bitrate`), so one message serves both and only the command
/// knows flag names.
package enum SettingReference: String, CaseIterable, Sendable {
    case bitrate, quality, format, noOverwrite, reencode, loudnessOff, proxyProvider, regions, shard, shards
    case allowMissingSounds, fallbackVoice, stretchSeconds, renderedFile
    case ambienceSound, startGongSound, intervalGongSound, bellSound, soundListing

    /// How the library names the setting in a sentence.
    package var words: String {
        switch self {
        case .bitrate: "the bit rate"
        case .quality: "the quality"
        case .format: "the format setting"
        case .noOverwrite: "the no-overwrite setting"
        case .reencode: "re-encoding"
        case .loudnessOff: "loudness off"
        case .proxyProvider: "the app backend's TTS proxy and its URL"
        case .regions: "stretchRegions"
        case .shard: "the shard"
        case .shards: "the number of shards"
        case .allowMissingSounds: "allowing missing sounds"
        case .fallbackVoice: "a fallback voice"
        case .stretchSeconds: "the stretches' length"
        case .renderedFile: "the rendered file's path"
        case .ambienceSound: "the ambience setting"
        case .startGongSound: "the start gong setting"
        case .intervalGongSound: "the interval gong setting"
        case .bellSound: "the bell setting"
        case .soundListing: "the library's listing"
        }
    }

    /// Where the setting stands in a message until it is named: `{{setting:bitrate}}`.
    package var marker: String { "{{setting:\(rawValue)}}" }
}

/// `text` with every setting marker replaced by `name` of its setting (the library's words unless
/// a command names them its own way).
package func namingSettings(
    in text: String,
    _ name: (SettingReference) -> String = { $0.words }
) -> String {
    guard text.contains("{{setting:") else { return text }
    var named = text
    for setting in SettingReference.allCases { named = named.replacing(setting.marker, with: name(setting)) }
    return named
}
