import Foundation

/// The small program each Piper worker runs: it loads the model once, then answers requests,
/// one line of JSON each on its standard input, with a line of JSON and the audio on its
/// standard output. It is handed to the engine's interpreter as `python3 -I -c SOURCE MODEL CONFIG THREADS`,
/// so the bridge always matches the command that speaks to it and nothing is installed beside Piper.
///
/// The interpreter runs isolated, so that nothing but the engine's own environment runs inside it:
/// `-I` (no current directory or script folder on `sys.path`, no user site-packages, no `PYTHON*`
/// variables), in a fixed working directory (``workingDirectory``), with an environment of its own
/// (``environment``), never the user's: a `json.py` or `sitecustomize.py` where the command is run,
/// `PYTHONPATH`, API keys and `RENDER_SESSION_*` headers never reach it.
///
/// The protocol:
/// - first, `{"ready": true, "sampleRate": 22050}` once the model is loaded, or `{"error": "…"}` and exit 1;
/// - per request `{"paragraphs": [["…", "…"], ["…"]], "lengthScale": 1.0, "sentencePauseFrames": n,
///   "paragraphPauseFrames": m}`,
///   `{"frames": N}` followed by N little-endian 16-bit mono samples, or `{"error": "…"}`;
/// - end of input ends the worker.
///
/// What the worker writes is read as a protocol from a process that may be broken
/// (``maximumLineBytes``, and at most the frames a clip of the request's text may hold,
/// ``ClipLengthLimit``): anything else ends the process with an error naming it.
///
/// The sentences are parted here (``SentenceSplitter``: not after `Dr.`, `z. B.`, an initial), not
/// by Piper: the bridge speaks each sentence, joins the chunks Piper parts it into with no pause,
/// the sentences with the sentence pause and the paragraphs with the paragraph pause. It asks for
/// the raw level (`normalize_audio=False`): Piper's default scales every sentence to full scale on
/// its own, which makes sentences uneven and loud; the renderer's loudness stage sets the level.
/// onnxruntime runs `THREADS` threads for one request; the pool decides how many (``PiperWorkerPool``).
enum PiperBridge {
    static let source = #"""
        import json, signal, sys

        # Ctrl-C reaches the whole process group: the command decides, and the end of input ends the worker.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        out = sys.stdout.buffer

        def reply(message, audio=b""):
            out.write(json.dumps(message).encode() + b"\n" + audio)
            out.flush()

        try:
            import numpy, onnxruntime
            from piper import PiperVoice, SynthesisConfig
            from piper.config import PiperConfig
            model, config_path, threads = sys.argv[1], sys.argv[2], int(sys.argv[3])
            options = onnxruntime.SessionOptions()
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = 1
            with open(config_path, encoding="utf-8") as file:
                config = PiperConfig.from_dict(json.load(file))
            session = onnxruntime.InferenceSession(model, sess_options=options, providers=["CPUExecutionProvider"])
            voice = PiperVoice(session=session, config=config)
        except Exception as error:
            reply({"error": f"{type(error).__name__}: {error}"})
            sys.exit(1)
        reply({"ready": True, "sampleRate": config.sample_rate})

        for line in sys.stdin.buffer:
            try:
                request = json.loads(line)
                synthesis = SynthesisConfig(length_scale=config.length_scale * request["lengthScale"], normalize_audio=False)
                sentence_pause = numpy.zeros(request["sentencePauseFrames"], dtype=numpy.int16)
                paragraph_pause = numpy.zeros(request["paragraphPauseFrames"], dtype=numpy.int16)
                parts, spoken = [], False
                for paragraph in request["paragraphs"]:
                    if parts:
                        parts.append(paragraph_pause)
                    for index, sentence in enumerate(paragraph):
                        if index:
                            parts.append(sentence_pause)
                        # Piper may part a sentence further (at "Dr."): its chunks are joined with no pause.
                        chunks = [chunk.audio_int16_array for chunk in voice.synthesize(sentence, synthesis)]
                        spoken = spoken or any(len(chunk) for chunk in chunks)
                        parts.extend(chunks)
                if not spoken:
                    reply({"error": "Piper spoke no audio for this text"})
                    continue
                audio = numpy.concatenate(parts).astype("<i2").tobytes()
                reply({"frames": len(audio) // 2}, audio)
            except Exception as error:
                reply({"error": f"{type(error).__name__}: {error}"})
        """#

    /// The arguments after the interpreter for a worker of `model` running `threads` threads.
    static func arguments(model: PiperModel, threads: Int) -> [String] {
        ["-I", "-c", source, model.modelPath, model.configPath, String(threads)]
    }

    /// The working directory of every worker: fixed, whatever the command's is.
    static let workingDirectory = "/"

    /// The whole environment of every worker: a fixed search path and a UTF-8 locale, nothing of
    /// the user's (no keys, no headers, no `PYTHON*` variables; `-I` ignores those anyway).
    static let environment: [String: String] = [
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
    ]

    /// The longest line the worker may write: its greeting and headers are a few dozen bytes,
    /// an error message a few hundred.
    static let maximumLineBytes = 65_536

    /// One request: the text as paragraphs of sentences (``SentenceSplitter``), Piper's length
    /// scale (1 / speed) and the pauses in the model's frames.
    struct Request: Encodable, Sendable {
        let paragraphs: [[String]]
        let lengthScale: Double
        let sentencePauseFrames: Int64
        let paragraphPauseFrames: Int64

        /// The request as the line the bridge reads.
        var line: Data {
            var data = (try? JSONEncoder().encode(self)) ?? Data()
            data.append(0x0A)
            return data
        }
    }

    /// A line the bridge writes: the greeting, or a request's answer (followed by `frames` samples).
    struct Header: Decodable {
        let ready: Bool?
        let sampleRate: Int?
        let frames: Int?
        let error: String?
    }
}
