internal import SessionTimeline

/// Chapters as Vorbis comments, the form FLAC and Ogg players (and ffmpeg) read them in:
/// `CHAPTER001=00:04:30.000` and `CHAPTER001NAME=Body scan`.
enum VorbisChapterComments {
    /// The two comments, as `(field, value)`, for chapter `number` (from 1) of a file at `sampleRate`.
    ///
    /// The number takes three digits, more past 999, as the convention's readers expect; the time
    /// is ``AudioChapter/timestamp(sampleRate:)``, the one rounding every format shares.
    static func entries(_ number: Int, _ chapter: AudioChapter, sampleRate: SampleRate) -> [(String, String)] {
        let digits = String(number)
        let key = "CHAPTER" + String(repeating: "0", count: max(0, 3 - digits.count)) + digits
        return [(key, chapter.timestamp(sampleRate: sampleRate)), (key + "NAME", chapter.title)]
    }
}
