internal import CEspeakNG
import Foundation
package import SessionTimeline

#if canImport(Glibc)
import Glibc
#endif

/// The embedded voice: eSpeak NG, called in-process through libespeak-ng (opened on first use),
/// its speech encoded to MP3 with LAME.
///
/// eSpeak's C API keeps global state (one voice, one rate, one callback), so every call goes
/// through one lock: syntheses run one at a time, whatever the caller's concurrency. Encoding
/// happens outside the lock.
package enum EmbeddedVoice {
    /// eSpeak's normal speaking rate in words per minute, used at speed 1.0.
    package static let normalWordsPerMinute = 175

    /// The voice's speech for `text` as MP3 bytes, with where each of its words and sentences is
    /// (``ESpeakMarks``; `nil` when eSpeak's events do not fit the text).
    ///
    /// - Parameters:
    ///   - voice: an eSpeak voice name, such as `en-us` or `de`.
    ///   - speed: 1.0 for eSpeak's normal rate (175 words per minute); the rate is
    ///     `round(175 × speed)`, clamped to eSpeak's 80…450.
    ///
    /// The same text, voice and speed always give the same bytes: each text is spoken by an
    /// engine started afresh (``EngineState/fresh()``), not one carrying what it spoke before.
    package static func speech(
        text: String,
        voice: String,
        speed: Double
    ) throws(AudioError) -> (mp3: [UInt8], marks: SpeechMarks?) {
        let (samples, sampleRate, events) = try synthesize(text: text, voice: voice, speed: speed)
        let mp3 = try SpeechClip.mp3(samples, sampleRate: sampleRate, voice: "eSpeak NG")
        let marks = ESpeakMarks.marks(of: text, events: events, samples: samples)
        return (
            mp3,
            marks.map { SpeechMarks(sampleRate: SampleRate(sampleRate)!, words: $0.words, sentences: $0.sentences) }
        )
    }

    /// The marks of a clip of `text` this voice spoke before, whose marks were not kept (a cache
    /// made before marks existed, or by the `espeak-ng` command): `nil` when the clip is not
    /// this voice's speech of `text` (``SpeechAlignment``).
    ///
    /// A clip's sound does not say where eSpeak began each word, so the text is spoken again
    /// with its events, the new speech is aligned with the clip, and each event is carried to
    /// the clip's sample that says the same. The words are then placed on the clip's own
    /// samples, as for a new clip (``ESpeakMarks``): a word after silence starts at its sound.
    ///
    /// - Parameters:
    /// - Parameter path: the clip, decoded as a render decodes it (its channels mixed to one).
    package static func recoveredMarks(
        text: String,
        voice: String,
        speed: Double,
        clipAt path: String
    ) throws(AudioError) -> SpeechMarks? {
        let (clip, rate) = try monoSamples(of: path)
        let (samples, spokenRate, events) = try synthesize(text: text, voice: voice, speed: speed)
        let spoken = try BandEnergies(samples: samples.map { Float($0) / 32_768 }, sampleRate: spokenRate)
        // Compared at eSpeak's rate: a clip converted to another rate keeps its envelope, but
        // its bands would fall on other bins.
        var heardSamples = clip.map { Float($0) / 32_768 }
        if rate.hertz != spokenRate {
            let resampler = try Resampler(inputRate: rate.hertz, outputRate: spokenRate, channelCount: 1)
            var converted: [Float] = []
            try resampler.process(heardSamples, frames: heardSamples.count, appendingTo: &converted)
            try resampler.flush(appendingTo: &converted)
            heardSamples = converted
        }
        let heard = try BandEnergies(samples: heardSamples, sampleRate: spokenRate)
        guard let alignment = SpeechAlignment(reference: spoken, target: heard) else { return nil }
        let scale = Double(rate.hertz) / Double(spokenRate)
        let carried = events.map { event in
            var event = event
            event.sample = ESpeakMarks.carried(
                event.sample,
                from: samples,
                to: min(clip.count, Int((Double(alignment.targetSample(event.sample)) * scale).rounded())),
                in: clip,
                rates: (spoken: spokenRate, clip: rate.hertz)
            )
            return event
        }
        return ESpeakMarks.marks(of: text, events: carried, samples: clip).map {
            SpeechMarks(sampleRate: rate, words: $0.words, sentences: $0.sentences)
        }
    }

    /// The clip at `path` decoded as a render decodes it, its channels mixed to one, as 16-bit
    /// samples (the scale ``ESpeakMarks`` judges sound on).
    static func monoSamples(of path: String) throws(AudioError) -> (samples: [Int16], sampleRate: SampleRate) {
        let decoder = try AudioFileDecoder(path: path)
        let channels = decoder.channelCount.count
        var clip: [Int16] = []
        var block: [Float] = []
        while case let count = try decoder.read(into: &block, maximumFrames: 65_536), count > 0 {
            for frame in 0..<count {
                var sum: Float = 0
                for channel in 0..<channels { sum += block[frame * channels + channel] }
                clip.append(Int16(max(-32_768, min(32_767, (sum / Float(channels) * 32_768).rounded()))))
            }
        }
        return (clip, decoder.sampleRate)
    }

    /// The words per minute eSpeak speaks at `speed`.
    package static func wordsPerMinute(speed: Double) -> Int {
        let rate = (Double(normalWordsPerMinute) * speed).rounded()
        return Int(min(450, max(80, rate.isFinite ? rate : Double(normalWordsPerMinute))))
    }

    /// eSpeak's speech for `text` as 16-bit mono samples at its own rate (22,050 Hz), and its
    /// word, sentence and clause-end events.
    ///
    /// The corresponding libespeak-ng calls are `espeak_Initialize`, `espeak_SetVoiceByName`,
    /// `espeak_SetParameter` and `espeak_Synth` (synchronous mode, audio and events through the
    /// callback).
    static func synthesize(
        text: String,
        voice: String,
        speed: Double
    ) throws(AudioError) -> (samples: [Int16], sampleRate: Int, events: [ESpeakTextEvent]) {
        try engine.withLock { (state) throws(AudioError) -> ([Int16], Int, [ESpeakTextEvent]) in
            let library = try state.fresh()
            // The name is looked up in eSpeak's own list and the voice set by its identifier:
            // `espeak_SetVoiceByName` also takes a path (relative to espeak-ng-data, `../` and
            // all), and some listed languages (`en-gb`, `fr-fr`) are not names it finds.
            let identifier = Self.voice(for: voice, in: state.listed(library))?.identifier
            let chosen = identifier.map { library.setVoiceByName($0) }
            guard chosen == EE_OK else {
                throw AudioError(
                    .cannotSynthesize,
                    path: nil,
                    reason: "eSpeak NG has no voice named \"\(voice)\" (`render-session voices` lists them)",
                    libraryCode: chosen.map { AudioError.LibraryCode(.eSpeakNG, $0.rawValue) }
                )
            }
            _ = library.setParameter(espeakRATE, Int32(wordsPerMinute(speed: speed)), 0)
            let collector = SampleCollector()
            let unmanaged = Unmanaged.passRetained(collector)
            defer { unmanaged.release() }
            let utf8 = Array(text.utf8CString)
            let result = utf8.withUnsafeBufferPointer { buffer in
                library.synth(
                    buffer.baseAddress,
                    buffer.count,
                    0,
                    POS_CHARACTER,
                    0,
                    UInt32(espeakCHARS_UTF8 | espeakENDPAUSE),
                    nil,
                    unmanaged.toOpaque()
                )
            }
            guard result == EE_OK else {
                throw AudioError(
                    .cannotSynthesize,
                    path: nil,
                    reason: "eSpeak NG failed to speak (code \(result.rawValue))",
                    libraryCode: AudioError.LibraryCode(.eSpeakNG, result.rawValue)
                )
            }
            return (collector.samples, state.sampleRate ?? 22_050, collector.events)
        }
    }

    /// eSpeak NG's voices: each one's name and the languages it speaks, the first being the
    /// name `espeak:LANGUAGE` voice ids use. The corresponding libespeak-ng call is `espeak_ListVoices`.
    /// eSpeak NG's version (`1.51`), read without starting the engine; `nil` when it cannot be loaded.
    package static func engineVersion() -> String? {
        // Under the lock: a reference held elsewhere would keep the library loaded through `fresh()`.
        engine.withLock { state in
            guard let library = state.library ?? (try? ESpeakLibrary.load()) else { return nil }
            return library.info(nil).map { String(cString: $0) }
        }
    }

    package static func voices() throws(AudioError) -> [(name: String, languages: [String])] {
        try engine.withLock { (state) throws(AudioError) -> [(name: String, languages: [String])] in
            state.listed(try state.started()).map { ($0.name, $0.languages) }
        }
    }

    /// Whether eSpeak NG has a voice for `language` (`en-us`, `de`, letter case aside): one of
    /// the languages ``voices()`` lists, the only names ``mp3(text:voice:speed:)`` takes.
    package static func hasVoice(_ language: String) throws(AudioError) -> Bool {
        try engine.withLock { (state) throws(AudioError) -> Bool in
            voice(for: language, in: state.listed(try state.started())) != nil
        }
    }

    /// One entry of eSpeak's voice list.
    private struct ListedVoice {
        let name: String
        let languages: [String]
        /// The voice file, relative to espeak-ng-data's `voices`/`lang` (`gmw/en-US`): the name
        /// `espeak_SetVoiceByName` is given, always one eSpeak itself listed.
        let identifier: String

    }

    /// The voice whose first language is `language`, else the first that speaks it at all
    /// (`en` is a second language of `en-gb`), letter case aside.
    private static func voice(for language: String, in voices: [ListedVoice]) -> ListedVoice? {
        func same(_ other: String) -> Bool { other.caseInsensitiveCompare(language) == .orderedSame }
        return voices.first { $0.languages.first.map(same) ?? false }
            ?? voices.first { $0.languages.contains(where: same) }
    }

    /// The voices, as `espeak_ListVoices` gives them.
    private static func listVoices(_ library: ESpeakLibrary) -> [ListedVoice] {
        guard var entry = library.listVoices(nil) else { return [] }
        var voices: [ListedVoice] = []
        while let voice = entry.pointee {
            voices.append(
                ListedVoice(
                    name: voice.pointee.name.map { String(cString: $0) } ?? "",
                    languages: languages(voice.pointee.languages),
                    identifier: voice.pointee.identifier.map { String(cString: $0) } ?? ""
                )
            )
            entry += 1
        }
        return voices.filter { !$0.identifier.isEmpty && !$0.languages.isEmpty }
    }

    /// eSpeak's language list: a priority byte, then a NUL-terminated name, again and again, up to a zero byte.
    private static func languages(_ list: UnsafePointer<CChar>?) -> [String] {
        guard var cursor = list else { return [] }
        var languages: [String] = []
        while cursor.pointee != 0 {
            cursor += 1  // the priority byte
            let language = String(cString: cursor)
            languages.append(language)
            cursor += language.utf8.count + 1
        }
        return languages
    }

    private struct EngineState {
        var library: ESpeakLibrary?
        var sampleRate: Int?
        var voices: [ListedVoice]?
        /// Whether the started library has spoken: it then carries state from that text.
        var hasSpoken = false

        /// The library as it is when it starts, for one synthesis.
        ///
        /// eSpeak keeps state from one text to the next that no call resets (its pitch flutter's
        /// place in its table, a function's `static`): the same text came out a few samples
        /// longer or shorter depending on what the process spoke before it. So two cold caches
        /// differed, and the marks recovered for a cached clip
        /// (``recoveredMarks(text:voice:speed:clipAt:)``) depended on which clips were recovered
        /// before it, and in which order concurrent renders reached the engine: recovered afresh,
        /// 71 of the fixture cache's 306 words moved, by up to 50 ms.
        /// Once it has spoken, the library is stopped, closed and opened again, which starts every
        /// `static` afresh: 6–15 ms a text (measured in C, idle and loaded), against 4 ms to speak
        /// a seven-word interjection and 85 ms for a 35-second paragraph. Byte-identical caches,
        /// whatever the order, are worth that.
        mutating func fresh() throws(AudioError) -> ESpeakLibrary {
            if hasSpoken {
                library = nil  // the only reference: eSpeak stops and the library closes
            }
            let library = try started()
            hasSpoken = true
            return library
        }

        /// eSpeak's voice list, read once.
        mutating func listed(_ library: ESpeakLibrary) -> [ListedVoice] {
            if let voices { return voices }
            let voices = listVoices(library)
            self.voices = voices
            return voices
        }

        /// The library, opened and initialized on first use.
        mutating func started() throws(AudioError) -> ESpeakLibrary {
            if let library { return library }
            let library = try ESpeakLibrary.load()
            library.setSynthCallback(collectSamples)
            let rate = library.start()
            guard rate > 0 else {
                throw AudioError(
                    .cannotSynthesize,
                    path: nil,
                    reason: "eSpeak NG cannot start (is espeak-ng-data installed?)",
                    libraryCode: AudioError.LibraryCode(.eSpeakNG, rate)
                )
            }
            self.library = library
            sampleRate = Int(rate)
            return library
        }
    }

    private static let engine = Locked(EngineState())
}

/// libespeak-ng's entry points, loaded when the embedded voice first speaks.
///
/// libespeak-ng pulls in an audio-output stack (PulseAudio, ALSA, X11 client libraries) that a
/// render never uses; linking it would make every run of the command load them, about 3 ms of
/// the 10-minute render's ~80. So it is opened with `dlopen` on first use, and its functions are
/// called through the types `speak_lib.h` declares.
///
/// Each value owns one `dlopen` reference, given back when it goes: eSpeak is stopped and the
/// library closed, so it is unloaded, and its state with it, once no value is left
/// (``EmbeddedVoice/EngineState/fresh()``). Values are used under the engine's lock, or by one
/// caller alone (``EmbeddedVoice/engineVersion()``).
private final class ESpeakLibrary: @unchecked Sendable {
    typealias Initialize = @convention(c) (espeak_AUDIO_OUTPUT, Int32, UnsafePointer<CChar>?, Int32) -> Int32
    typealias SetSynthCallback =
        @convention(c) (
            (@convention(c) (UnsafeMutablePointer<Int16>?, Int32, UnsafeMutablePointer<espeak_EVENT>?) -> Int32)?
        ) -> Void
    typealias SetVoiceByName = @convention(c) (UnsafePointer<CChar>?) -> espeak_ERROR
    typealias SetParameter = @convention(c) (espeak_PARAMETER, Int32, Int32) -> espeak_ERROR
    typealias ListVoices =
        @convention(c) (UnsafeMutablePointer<espeak_VOICE>?) -> UnsafeMutablePointer<UnsafePointer<espeak_VOICE>?>?
    typealias Info = @convention(c) (UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> UnsafePointer<CChar>?
    typealias Terminate = @convention(c) () -> espeak_ERROR
    typealias Synth =
        @convention(c) (
            UnsafeRawPointer?, Int, UInt32, espeak_POSITION_TYPE, UInt32, UInt32,
            UnsafeMutablePointer<UInt32>?, UnsafeMutableRawPointer?
        ) -> espeak_ERROR

    private let initialize: Initialize
    let setSynthCallback: SetSynthCallback
    let setVoiceByName: SetVoiceByName
    let setParameter: SetParameter
    let synth: Synth
    let listVoices: ListVoices
    let info: Info
    private let terminate: Terminate
    private let handle: UnsafeMutableRawPointer

    private init(handle: UnsafeMutableRawPointer) throws(AudioError) {
        self.handle = handle
        func symbol<T>(_ name: String, as type: T.Type) throws(AudioError) -> T {
            guard let address = dlsym(handle, name) else {
                throw AudioError(.cannotSynthesize, path: nil, reason: "libespeak-ng has no \(name)")
            }
            return unsafeBitCast(address, to: type)
        }
        do {
            initialize = try symbol("espeak_Initialize", as: Initialize.self)
            setSynthCallback = try symbol("espeak_SetSynthCallback", as: SetSynthCallback.self)
            setVoiceByName = try symbol("espeak_SetVoiceByName", as: SetVoiceByName.self)
            setParameter = try symbol("espeak_SetParameter", as: SetParameter.self)
            synth = try symbol("espeak_Synth", as: Synth.self)
            listVoices = try symbol("espeak_ListVoices", as: ListVoices.self)
            info = try symbol("espeak_Info", as: Info.self)
            terminate = try symbol("espeak_Terminate", as: Terminate.self)
        } catch {
            dlclose(handle)
            throw error
        }
    }

    /// Whether this value started eSpeak, which it then stops when it goes.
    private var isStarted = false

    /// Starts eSpeak in synchronous mode (speech through the callback, no audio device): its
    /// sample rate, or a negative error code.
    func start() -> Int32 {
        isStarted = true
        return initialize(AUDIO_OUTPUT_SYNCHRONOUS, 0, nil, Int32(espeakINITIALIZE_DONT_EXIT))
    }

    /// Stops eSpeak if this value started it (freeing what it allocated), and closes the library.
    deinit {
        if isStarted { _ = terminate() }
        dlclose(handle)
    }

    /// Opens `libespeak-ng.so.1` and looks up the functions the voice calls.
    static func load() throws(AudioError) -> ESpeakLibrary {
        guard let handle = dlopen("libespeak-ng.so.1", RTLD_NOW | RTLD_LOCAL) else {
            let reason = dlerror().map { String(cString: $0) } ?? "unknown error"
            throw AudioError(
                .cannotSynthesize,
                path: nil,
                reason: "cannot load libespeak-ng (apt-get install libespeak-ng1): \(reason)"
            )
        }
        return try ESpeakLibrary(handle: handle)
    }
}

/// Receives eSpeak's audio blocks and its word and sentence events during one synthesis.
private final class SampleCollector {
    var samples: [Int16] = []
    /// Each word's and sentence's event, in order: where in the text (in characters, from 1) and
    /// at which sample of the speech.
    var events: [ESpeakTextEvent] = []
}

/// A word, sentence or clause-end event of eSpeak's: where it is in the text and in the speech.
struct ESpeakTextEvent: Equatable {
    enum Kind { case word, sentence, clauseEnd }
    var kind: Kind
    /// The first character, counted in Unicode scalars from 1, and (words only) how many.
    var textPosition: Int
    var length: Int
    /// The sample of the speech where eSpeak starts it (eSpeak's `sample`: counted from the
    /// synthesis's first sample; its `audio_position` is the same in milliseconds).
    var sample: Int
}

/// eSpeak's synthesis callback: appends each block and its text events to the `SampleCollector`
/// passed as user data.
private func collectSamples(
    _ wave: UnsafeMutablePointer<Int16>?,
    _ count: Int32,
    _ events: UnsafeMutablePointer<espeak_EVENT>?
) -> Int32 {
    guard let userData = events?.pointee.user_data else { return 0 }
    let collector = Unmanaged<SampleCollector>.fromOpaque(userData).takeUnretainedValue()
    if let wave, count > 0 {
        collector.samples.append(contentsOf: UnsafeBufferPointer(start: wave, count: Int(count)))
    }
    var event = events
    while let current = event?.pointee, current.type != espeakEVENT_LIST_TERMINATED {
        let kind: ESpeakTextEvent.Kind? =
            switch current.type {
            case espeakEVENT_WORD: .word
            case espeakEVENT_SENTENCE: .sentence
            case espeakEVENT_END: .clauseEnd
            default: nil
            }
        if let kind {
            collector.events.append(
                ESpeakTextEvent(
                    kind: kind,
                    textPosition: Int(current.text_position),
                    length: Int(current.length),
                    sample: Int(current.sample)
                )
            )
        }
        event = event.map { $0 + 1 }
    }
    return 0
}
