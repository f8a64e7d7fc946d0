/// Where a speech clip's sound is heard, as word marks place words: "sound" at a level, and "an
/// onset after silence", which ``ESpeakMarks`` and ``WordPlacement`` share. Piper's words are
/// placed at ``level``; eSpeak NG's at ``decodedLevel``, since its onsets are abrupt (the level
/// changes nothing there) and its marks are recovered on clips decoded from MP3.
enum HeardSound {
    /// The level at which a Piper clip's sample counts as sound, of full scale: −50 dBFS.
    ///
    /// `verify` and the tests take an onset at −40 dBFS in the rendered file
    /// (``VerificationRules/onsetLevel`` in SessionKit), and a speech clip reaches a session's
    /// loudness with gain: 9.5–15 dB at the default preset for both engines' voices (measured on
    /// Piper's and eSpeak NG's clips of single words). So −50 dBFS in the clip is about −40 dBFS
    /// where it is heard. The difference matters because a word's attack can rise slowly: Piper's
    /// voiced "B" of "Breathe" took 4–10 ms from −55 to −40 dBFS, and a word placed at the clip's
    /// own −40 dBFS started up to 10.3 ms after the rendered file's onset.
    static let level: Int16 = 104

    /// The level at which a clip decoded from the cache's MP3 counts as sound: −40 dBFS, as
    /// `verify` judges lossy files, above the noise MP3 leaves in the pauses next to speech.
    /// Recovering an eSpeak NG clip's marks (``EmbeddedVoice/recoveredMarks(text:voice:speed:clipAt:)``)
    /// places its words on the decoded clip by this level: at −50 dBFS that noise decided,
    /// recovery by recovery, where a word after a pause starts (two recoveries of one clip put
    /// "practise" 50 ms apart).
    static let decodedLevel: Int16 = 328

    /// Whether `samples[index]` is sound at `level`.
    static func sounds(_ samples: [Int16], _ index: Int, level: Int16 = level) -> Bool {
        samples[index].magnitude >= level.magnitude
    }

    /// The sample in `range` nearest `target` that is sound (at `level`) after at least `quiet`
    /// samples of silence (the clip's start counts as silence before it); `nil` when `range` has none.
    ///
    /// One pass that counts the silent samples before each candidate, so a range of any reach
    /// costs its length plus `quiet`, not their product.
    static func nearestOnsetAfterSilence(
        to target: Int,
        in range: Range<Int>,
        of samples: [Int16],
        quiet: Int,
        level: Int16 = level
    ) -> Int? {
        let range = range.clamped(to: 0..<samples.count)
        guard !range.isEmpty else { return nil }
        let lookBack = max(0, range.lowerBound - quiet)
        // Silence before the clip's first sample counts as long enough.
        var silentRun = lookBack == 0 ? quiet : 0
        for index in lookBack..<range.lowerBound {
            silentRun = sounds(samples, index, level: level) ? 0 : silentRun + 1
        }
        var nearest: Int?
        for index in range {
            if sounds(samples, index, level: level) {
                if silentRun >= quiet, nearest.map({ abs(index - target) < abs($0 - target) }) ?? true {
                    nearest = index
                }
                silentRun = 0
            } else {
                silentRun += 1
            }
        }
        return nearest
    }
}
