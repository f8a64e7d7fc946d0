import ArgumentParser
import SessionKit

/// `--speech-model DIR`, for the commands that run the speech check (`verify --speech`,
/// `prepare`/`render`/`batch --check-speech`).
struct SpeechCheckOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "A CTranslate2 Whisper model folder for the speech check; default: the tiny.en that scripts/setup-speech-check installs.",
            valueName: "dir"
        ),
        completion: Completions.folder
    )
    var speechModel: String?

    /// The check, with the recognizer found where the setup script puts it (or as the
    /// environment says), hearing with `--speech-model`'s model if given.
    var check: SpeechCheck {
        SpeechCheck(recognizer: SpeechRecognizer(installation: .located(model: speechModel)))
    }
}
