import Foundation
internal import SessionTimeline

/// The speech check's recognizer process: a Python program run with `-I -c`, which loads a
/// CTranslate2 Whisper model with faster-whisper once and then transcribes one request a line.
///
/// The protocol is lines of JSON both ways. The program greets with `{"ready": true}` (or
/// `{"error": …}` and exits); each request names an audio file and a span of it in frames at
/// 16 kHz (the rate Whisper hears at; the file is decoded once for all the spans asked of it in a
/// row); each answer is `{"words": [[text, start, end], …]}` at 16 kHz, or `{"error": …}`.
///
/// The decoding is fixed for a check, not a transcript: English, greedy (beam 1, temperature 0),
/// no conditioning on the text before (a misheard clip must not bend the next), word times, and
/// the Silero voice-activity filter, which keeps Whisper from hearing words in silence or noise.
enum RecognizerBridge {
    static let source = #"""
        import json, sys

        def reply(answer):
            sys.stdout.write(json.dumps(answer, separators=(",", ":")) + "\n")
            sys.stdout.flush()

        def phrase(error):
            lines = str(error).splitlines()
            return f"{type(error).__name__}: {lines[0] if lines else ''}"[:300]

        try:
            from faster_whisper import WhisperModel, decode_audio
            model = WhisperModel(sys.argv[1], device="cpu", compute_type="int8", cpu_threads=int(sys.argv[2]),
                                 num_workers=1, local_files_only=True)
        except Exception as error:
            reply({"error": f"the recognizer did not load {sys.argv[1]}: {phrase(error)}"})
            sys.exit(1)
        reply({"ready": True})
        decoded_path, decoded = None, None
        for line in sys.stdin:
            try:
                request = json.loads(line)
                path, start, end = request["path"], int(request["start"]), int(request["end"])
                if path != decoded_path:
                    decoded_path, decoded = None, decode_audio(path, sampling_rate=16000)
                    decoded_path = path
                segments, _ = model.transcribe(decoded[max(0, start):max(0, end)], language="en", beam_size=1,
                                               temperature=0.0, condition_on_previous_text=False,
                                               word_timestamps=True, vad_filter=True)
                reply({"words": [[word.word.strip(), round(word.start * 16000), round(word.end * 16000)]
                                 for segment in segments for word in (segment.words or []) if word.word.strip()]})
            except Exception as error:
                reply({"error": phrase(error)})
        """#

    /// The rate the recognizer hears at, which its frames count in.
    static let sampleRate: SampleRate = 16_000

    /// The arguments after the interpreter for a recognizer of `model` running `threads` threads.
    static func arguments(model: String, threads: Int) -> [String] {
        ["-I", "-c", source, model, String(threads)]
    }

    /// The whole environment of the process: a fixed search path, a UTF-8 locale and the Hugging
    /// Face hub offline (faster-whisper asks it nothing for a model folder; this makes sure),
    /// nothing of the user's.
    static let environment: [String: String] = [
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "HF_HUB_OFFLINE": "1",
    ]

    /// The longest line the recognizer may write: a word is about 25 bytes, and a clip of 5,000
    /// characters has at most 2,500 words (62 KB); an error is at most 300 characters.
    static let maximumLineBytes = 262_144

    /// One request: the file and the span of it, `[start, end)` in frames at 16 kHz.
    struct Request: Encodable, Sendable {
        let path: String
        let start: Int64
        let end: Int64

        /// The request as the line the recognizer reads.
        var line: Data {
            var data = (try? JSONEncoder().encode(self)) ?? Data()
            data.append(0x0A)
            return data
        }
    }

    /// A line the recognizer writes: its greeting, or a request's answer.
    struct Answer: Decodable {
        let ready: Bool?
        let error: String?
        /// Each word heard: its text, and its `[start, end)` in frames at 16 kHz.
        let words: [HeardWordLine]?
    }

    /// `[text, start, end]`.
    struct HeardWordLine: Decodable {
        let text: String
        let start: Int64
        let end: Int64

        init(from decoder: any Decoder) throws {
            var container = try decoder.unkeyedContainer()
            text = try container.decode(String.self)
            start = try container.decode(Int64.self)
            end = try container.decode(Int64.self)
        }
    }
}
