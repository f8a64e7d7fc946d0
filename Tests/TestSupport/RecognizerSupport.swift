package import SessionKit
public import Testing

/// The speech check's recognizer `scripts/setup-speech-check` installs, when this machine has it.
public enum RecognizerSupport {
    /// The installation found the way the command finds it, if it can run.
    package static let installation: RecognizerInstallation? = {
        let installation = RecognizerInstallation.located()
        return (try? installation.check()) == nil ? nil : installation
    }()
}

extension Trait where Self == ConditionTrait {
    /// Runs a test only where the speech check's recognizer and its tiny.en model are installed
    /// (`scripts/setup-speech-check`, which `scripts/test` runs); elsewhere `swift test` reports it
    /// as skipped, with the reason.
    public static var requiresRecognizer: Self {
        .enabled(
            if: RecognizerSupport.installation != nil,
            "the speech check's recognizer is not installed (scripts/setup-speech-check)"
        )
    }
}
