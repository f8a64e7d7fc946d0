import Foundation

/// The small program each Piper worker runs: it loads the model once, then answers requests,
/// one line of JSON each on its standard input, with a line of JSON and the audio on its
/// standard output. It is handed to the engine's interpreter as `python3 -I -c SOURCE MODEL CONFIG THREADS ALIGNED`,
/// so the bridge always matches the command that speaks to it and nothing is installed beside Piper.
///
/// The interpreter runs isolated, so that nothing but the engine's own environment runs inside it:
/// `-I` (no current directory or script folder on `sys.path`, no user site-packages, no `PYTHON*`
/// variables), in a fixed working directory (``workingDirectory``), with an environment of its own
/// (``environment``), never the user's: a `json.py` or `sitecustomize.py` where the command is run,
/// `PYTHONPATH`, API keys and `RENDER_SESSION_*` headers never reach it.
///
/// The protocol:
/// - first, `{"ready": true, "sampleRate": 22050, "marksUnavailable": null}` once the model is
///   loaded, or `{"error": "…"}` and exit 1;
/// - per request `{"paragraphs": [["…", "…"], ["…"]], "lengthScale": 1.0, "sentencePauseFrames": n,
///   "paragraphPauseFrames": m}`,
///   `{"frames": N, "words": [[[start, end], null, …], …], "marksUnavailable": null}` followed
///   by N little-endian 16-bit mono samples, or `{"error": "…"}`;
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
///
/// Word timing: Piper 1.8 tells how many samples each phoneme took when its model has one more
/// output, which its `patch_voice_with_alignment` adds with the `onnx` package. Patching at every
/// start cost 1.35 s against 0.52 s for a plain load, so the first worker of a model writes the
/// patched copy to `ALIGNED` (``PiperModel/alignedCopyPath``), and every later one loads that as
/// fast as the model; the audio is the same. Each sentence's phonemes are then grouped into its
/// words: eSpeak's words between spaces, matched to the script's by their own phonemes (eSpeak
/// says "of the" as one word: it is parted where each word's phonemes fit best). Phoneme counts
/// that do not add up to the audio fail the clip; a sentence whose words cannot be matched leaves
/// the clip without words, saying why. Measured on 20 sentences, the timing costs under 1 % of
/// synthesis time.
enum PiperBridge {
    static let source = #"""
        import itertools, json, os, re, signal, sys, unicodedata

        # Ctrl-C reaches the whole process group: the command decides, and the end of input ends the worker.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        out = sys.stdout.buffer

        def reply(message, audio=b""):
            out.write(json.dumps(message).encode() + b"\n" + audio)
            out.flush()

        class MarksUnavailable(Exception):
            """No word timing for this sentence; the message says why. The audio is good."""

        class SampleCountMismatch(Exception):
            """The phonemes' sample counts do not add up to the audio: the engine is broken."""

        try:
            import numpy, onnxruntime
            from piper import PiperVoice, SynthesisConfig
            from piper.config import PiperConfig
            model, config_path, threads, aligned = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
            options = onnxruntime.SessionOptions()
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = 1
            with open(config_path, encoding="utf-8") as file:
                config = PiperConfig.from_dict(json.load(file))
            # Word timing needs the model's alignment output: added once (onnx, 1-2 s) to a copy
            # kept at `aligned`, which later workers load as fast as the model itself.
            marks_note = None if aligned else "there is no folder to keep the model's aligned copy in"
            if aligned and not os.path.exists(aligned):
                temporary = f"{aligned}.{os.getpid()}.tmp"
                try:
                    import onnx
                    from piper.patch_voice_with_alignment import add_alignment_output
                    network = onnx.load(model)
                    add_alignment_output(network)
                    onnx.save(network, temporary)
                    os.replace(temporary, aligned)
                except ModuleNotFoundError:
                    marks_note = "Piper's word timing needs the onnx package, which scripts/setup-piper installs"
                except Exception as error:
                    marks_note = f"Piper's alignment output cannot be added: {type(error).__name__}: {error}"
                finally:
                    if os.path.exists(temporary):
                        os.remove(temporary)
            path = aligned if aligned and os.path.exists(aligned) else model
            session = onnxruntime.InferenceSession(path, sess_options=options, providers=["CPUExecutionProvider"])
            voice = PiperVoice(session=session, config=config)
            aligning = len(session.get_outputs()) > 1
            if not aligning and marks_note is None:
                marks_note = "the model has no alignment output"
        except Exception as error:
            reply({"error": f"{type(error).__name__}: {error}"})
            sys.exit(1)
        reply({"ready": True, "sampleRate": config.sample_rate, "marksUnavailable": marks_note})

        STRESS, VOWELS, LENGTHS = "ˈˌ", set("aeiouæɐɑɒɔəɚɛɜɝɪʊʌᵻɨʉɘɵɤɯøœɞy"), set("ːʲ")
        # The largest phoneme distance at which words eSpeak joined or parted are still taken as the script's.
        MERGE_LIMIT = 0.5

        def phonemes_of(text):
            """Piper's phonemes of text, rebuilt as Piper makes them, and its words: runs of
            phonemes between spaces within a clause ("Well... now" is two)."""
            from piper import espeakbridge
            chars, groups = [], []
            for phonemes, terminator, _ in espeakbridge.get_phonemes(text):
                start = None
                for ch in unicodedata.normalize("NFD", re.sub(r"\([^)]+\)", "", phonemes)):
                    if ch == " " and start is not None:
                        groups.append((start, len(chars)))
                        start = None
                    elif ch != " " and start is None:
                        start = len(chars)
                    chars.append(ch)
                if start is not None:
                    groups.append((start, len(chars)))
                chars += unicodedata.normalize("NFD", terminator) + (" " if terminator in (",", ":", ";") else "")
            return "".join(chars), groups

        token_cache = {}
        def token_words(token):
            if token not in token_cache:
                text, groups = phonemes_of(token)
                token_cache[token] = tuple(text[a:b] for a, b in groups)
            return token_cache[token]

        def distance(a, b):
            """Edit distance of two phoneme strings, stress aside, per phoneme of the longer."""
            a, b = [c for c in a if c not in STRESS], [c for c in b if c not in STRESS]
            if not a or not b:
                return 1.0
            cost = lambda c: 0.3 if c in LENGTHS else 0.5 if c in VOWELS else 1.0
            row = list(itertools.accumulate([0.0] + [cost(c) for c in b]))
            for x in a:
                previous, row = row, [row[0] + cost(x)]
                for j, y in enumerate(b):
                    substitution = 0.0 if x == y else 0.3 if x in VOWELS and y in VOWELS else 1.0
                    row.append(min(previous[j] + substitution, previous[j + 1] + cost(x), row[j] + cost(y)))
            return row[-1] / max(len(a), len(b))

        def align(tw, sw):
            """The least-distance monotonic pairing of the tokens' words with the spoken words,
            one to one, or up to three to one either way (eSpeak joins "of the" into one word)."""
            n, m, inf = len(tw), len(sw), float("inf")
            best = [[(inf, None)] * (m + 1) for _ in range(n + 1)]
            best[0][0] = (0.0, None)
            for i, g in itertools.product(range(n + 1), range(m + 1)):
                if best[i][g][0] < inf and abs(i - g) <= 4:
                    for di, dg in ((1, 1), (2, 1), (3, 1), (1, 2), (1, 3)):
                        if i + di <= n and g + dg <= m:
                            d = distance("".join(w for _, w in tw[i:i + di]), "".join(sw[g:g + dg]))
                            score = best[i][g][0] + d + 0.1 * (di + dg - 2)
                            if score < best[i + di][g + dg][0]:
                                best[i + di][g + dg] = (score, (i, g, d))
            if best[n][m][0] == inf:
                raise MarksUnavailable(f"{n} written words cannot be matched to the {m} Piper spoke")
            steps, i, g = [], n, m
            while i or g:
                pi, pg, d = best[i][g][1]
                steps.append(((pi, i), (pg, g), d))
                i, g = pi, pg
            return steps[::-1]

        def word_spans(sentence, chunks):
            """[start, end) in the sentence's audio for each whitespace token of it (None for a
            token that is no spoken word: "--"), from the phonemes' sample counts."""
            text, groups = phonemes_of(sentence)
            spoken = "".join("".join(chunk.phonemes) for chunk in chunks)
            if text != spoken:
                raise MarksUnavailable("Piper's phonemes are not those of the sentence's text")
            first, last, offset = [], [], 0
            for chunk in chunks:
                alignments = chunk.phoneme_alignments
                if alignments is None:
                    raise MarksUnavailable("Piper gave no alignment for a phoneme missing from the model")
                total, samples = sum(int(a.num_samples) for a in alignments), len(chunk.audio_int16_array)
                if total != samples:
                    raise SampleCountMismatch(f"Piper's phoneme sample counts add up to {total}, its audio has {samples}")
                if [a.phoneme for a in alignments[1:-1]] != list(chunk.phonemes):
                    raise MarksUnavailable("Piper's alignments do not follow its phonemes")
                position = offset + int(alignments[0].num_samples)
                for a in alignments[1:-1]:
                    first += [position] * len(a.phoneme)
                    position += int(a.num_samples)
                    last += [position] * len(a.phoneme)
                offset += samples

            def span(a, b):
                while a < b and text[a] in " ,.!?:;":
                    a += 1
                while b > a and text[b - 1] in " ,.!?:;":
                    b -= 1
                return (first[a], last[b - 1]) if a < b else None

            tokens = sentence.split()
            tw = [(k, w) for k, t in enumerate(tokens) for w in token_words(t)]
            sw = [text[a:b] for a, b in groups]
            steps = [((i, i + 1), (i, i + 1), 0.0) for i in range(len(sw))] if len(tw) == len(sw) else align(tw, sw)
            spans = [None] * len(tokens)
            for (i0, i1), (g0, g1), d in steps:
                owners = [k for k, _ in itertools.groupby(k for k, _ in tw[i0:i1])]
                if (i1 - i0, g1 - g0) != (1, 1) and d > MERGE_LIMIT:
                    raise MarksUnavailable(
                        f"Piper spoke {' '.join(tokens[k] for k in owners)!r} unlike its words (distance {d:.2f})")
                start, end = groups[g0][0], groups[g1 - 1][1]
                cuts = ()
                if len(owners) > 1:
                    parts = ["".join(w for k, w in tw[i0:i1] if k == owner) for owner in owners]
                    places = (c for c in itertools.combinations(range(start + 1, end), len(owners) - 1)
                              if all(text[x - 1] not in STRESS for x in c))
                    cuts = min(places, key=lambda c: sum(distance(text[a:b], p) for (a, b), p in
                                                           zip(zip((start,) + c, c + (end,)), parts)), default=None)
                    if cuts is None:
                        raise MarksUnavailable(f"{' '.join(tokens[k] for k in owners)!r} cannot be parted")
                for k, a, b in zip(owners, (start,) + tuple(cuts), tuple(cuts) + (end,)):
                    piece = span(a, b)
                    if piece is None:
                        raise MarksUnavailable(f"{tokens[k]!r} has no phonemes of its own")
                    spans[k] = piece if spans[k] is None else (min(spans[k][0], piece[0]), max(spans[k][1], piece[1]))
            return spans

        for line in sys.stdin.buffer:
            try:
                request = json.loads(line)
                synthesis = SynthesisConfig(length_scale=config.length_scale * request["lengthScale"], normalize_audio=False)
                sentence_pause = numpy.zeros(request["sentencePauseFrames"], dtype=numpy.int16)
                paragraph_pause = numpy.zeros(request["paragraphPauseFrames"], dtype=numpy.int16)
                parts, spoken, frames = [], False, 0
                words, marks_unavailable = ([] if aligning else None), marks_note
                for paragraph in request["paragraphs"]:
                    if parts:
                        parts.append(paragraph_pause)
                        frames += len(paragraph_pause)
                    for index, sentence in enumerate(paragraph):
                        if index:
                            parts.append(sentence_pause)
                            frames += len(sentence_pause)
                        # Piper may part a sentence further (at "Dr."): its chunks are joined with no pause.
                        chunks = list(voice.synthesize(sentence, synthesis, include_alignments=aligning))
                        if words is not None:
                            try:
                                spans = word_spans(sentence, chunks)
                                words.append([None if s is None else [frames + s[0], frames + s[1]] for s in spans])
                            except MarksUnavailable as reason:
                                words, marks_unavailable = None, f"{reason} in {sentence!r}"
                        for chunk in chunks:
                            frames += len(chunk.audio_int16_array)
                            spoken = spoken or len(chunk.audio_int16_array) > 0
                            parts.append(chunk.audio_int16_array)
                if not spoken:
                    reply({"error": "Piper spoke no audio for this text"})
                    continue
                audio = numpy.concatenate(parts).astype("<i2").tobytes()
                reply({"frames": len(audio) // 2, "words": words, "marksUnavailable": marks_unavailable}, audio)
            except Exception as error:
                reply({"error": f"{type(error).__name__}: {error}"})
        """#

    /// The arguments after the interpreter for a worker of `model` running `threads` threads,
    /// keeping the model's aligned copy at `alignedCopy` (`""`: nowhere, so no word timing).
    static func arguments(model: PiperModel, threads: Int, alignedCopy: String?) -> [String] {
        ["-I", "-c", source, model.modelPath, model.configPath, String(threads), alignedCopy ?? ""]
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

    /// The longest line the worker may write: its greeting is a few dozen bytes, an error message
    /// a few hundred, and a header's word spans about 20 bytes a word (a 5,000-character text
    /// has at most 2,500 words: 50 KB).
    static let maximumLineBytes = 262_144

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
        /// Per sentence spoken, each of its whitespace tokens' `[start, end)` frames in the
        /// clip, or `null` for a token that is no spoken word; absent when there is no timing.
        let words: [[[Int]?]]?
        /// Why there is no word timing: no `onnx` package, a model without the output, a
        /// sentence whose phonemes could not be matched to its words.
        let marksUnavailable: String?
    }
}
