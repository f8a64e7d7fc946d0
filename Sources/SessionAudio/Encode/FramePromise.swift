/// The frames a writer promised its file and those written so far: the one place that refuses
/// a frame past the promise and a file closed short of it.
///
/// Each writer's header, LAME tag or granule position is made for a frame count fixed when the
/// file is opened; a file with other frames would be wrong without a decoder noticing.
struct FramePromise {
    /// How a writer's messages name its promise; each keeps the words it has always used.
    enum Wording {
        /// A WAV streamed with its header written first.
        case streamHeader
        /// A file opened for a frame count (WAV, FLAC and MP3).
        case file
        /// An Ogg Vorbis file.
        case vorbisFile
        /// An Ogg Opus file.
        case opusFile
    }

    /// The file or stream, for errors.
    let path: String
    /// The frames promised; `nil` when the writer promised none (a WAV whose length is a hint).
    let frameCount: Int64?
    let wording: Wording
    /// Frames written so far.
    private(set) var written: Int64 = 0

    init(path: String, frameCount: Int64?, wording: Wording) {
        self.path = path
        self.frameCount = frameCount
        self.wording = wording
    }

    /// Fails when `frames` more frames would pass the promise.
    func checkRoom(for frames: Int64) throws(AudioError) {
        guard let frameCount, written + frames > frameCount else { return }
        let promise =
            switch wording {
            case .streamHeader: "the header promised"
            case .file: "the file was opened for"
            case .vorbisFile: "it was opened for"
            case .opusFile: "the file is for"
            }
        throw AudioError(
            .cannotWrite,
            path: path,
            reason: "\(frames) more frames after \(written) would pass the \(frameCount) frames \(promise)"
        )
    }

    /// Counts `frames` frames written.
    mutating func record(_ frames: Int64) {
        written += frames
    }

    /// Fails unless exactly the promised frames were written.
    func checkKept() throws(AudioError) {
        guard let frameCount, written != frameCount else { return }
        let (subject, promise) =
            switch wording {
            case .streamHeader: ("stream", "its header promised")
            case .file, .vorbisFile: ("file", "it was opened for")
            case .opusFile: ("file", "it is for")
            }
        throw AudioError(
            .cannotWrite,
            path: path,
            reason: "the \(subject) ended after \(written) of the \(frameCount) frames \(promise)"
        )
    }
}
