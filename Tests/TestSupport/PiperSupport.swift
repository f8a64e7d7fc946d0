public import SessionKit
public import Testing

/// The Piper engine and voice `scripts/setup-piper` installs, when this machine has them.
public enum PiperSupport {
    /// The default voice, as the tests speak it.
    public static let voice: Voice = "piper:en_US-joe-medium"

    /// The installation found the way the command finds it, if it has the engine and the default voice.
    public static let installation: PiperInstallation? = {
        let installation = PiperInstallation.located()
        guard installation.engineInstalled, (try? installation.model(for: voice)) != nil else { return nil }
        return installation
    }()
}

extension Trait where Self == ConditionTrait {
    /// Runs a test only where the Piper engine and its default voice are installed
    /// (`scripts/setup-piper`, which `scripts/test` runs); elsewhere `swift test` reports it as
    /// skipped, with the reason.
    public static var requiresPiper: Self {
        .enabled(
            if: PiperSupport.installation != nil,
            "the Piper engine or its en_US-joe-medium voice is not installed (scripts/setup-piper)"
        )
    }
}
