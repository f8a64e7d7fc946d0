internal import SessionAudio

/// Counts the steps of a pipeline that must happen once per job however many stages ask for
/// what they give: the settings checked, the sound library opened, a voice checked.
///
/// A task-local that is `nil` unless a test sets it (`PipelineProbe.$current.withValue(probe)`):
/// the count is of that test's task alone, whatever other tests run at once, and work the pool
/// runs for the task counts too (``BlockingPool`` runs it in the calling task).
package final class PipelineProbe: Sendable {
    /// What is counted.
    package enum Step: Sendable, Hashable {
        /// A pipeline's settings checked (``SessionPipeline/init(settings:source:observer:)``).
        case settingsCheck
        /// A sound library's folder read (`sounds.json` and its files listed).
        case soundLibraryOpen
        /// A voice checked against its engine (``Voice``, ``SpeechProvider/checkVoice(_:)``).
        case voiceCheck
    }

    /// The probe of the running task, if a test set one.
    @TaskLocal package static var current: PipelineProbe?

    private let counts = Locked<[Step: Int]>([:])

    package init() {}

    /// Counts one `step`.
    package func count(_ step: Step) {
        counts.withLock { $0[step, default: 0] += 1 }
    }

    /// How many times `step` was counted.
    package func count(of step: Step) -> Int {
        counts.withLock { $0[step] ?? 0 }
    }
}
