package import SessionTimeline

extension SessionPipeline {
    /// Prepares and plans `script`, then writes it into `folder` as the seed app's queue
    /// (``QueuePlanner``, ``QueueWriter``): the clips as the cache holds them, each with the gain
    /// the render plays it at in `queue.json` (loudness planned as the render plans it), or with
    /// `reencode` rendered at the session's rate and gains in ``OutputSettings/resolvedFormat``.
    ///
    /// The folder is checked before any synthesis.
    /// - Throws: ``SessionError``.
    @discardableResult
    package func writeQueue(
        _ script: Script,
        to folder: String,
        reencode: Bool,
        progress: @Sendable (_ done: Int, _ total: Int) -> Void = { _, _ in }
    ) async throws(SessionError) -> (queue: SessionQueue, outcome: RenderOutcome) {
        try await pool.run { () async throws(SessionError) in
            let job: RenderJob
            do throws(SessionError) {
                job = try RenderJob(self)
            } catch {
                throw SessionError(.invalidSetting, error.lines.first ?? "", underlyingError: error)
            }
            try QueueWriter.checkDestination(folder, replaceExisting: output.replaceExisting)
            try job.checkVoicesAndSounds(of: [script])
            let prepared = try await job.prepare(scripts: [script])
            let timeline = try job.plan(script, clips: prepared)
            let delivery: QueuePlanner.Delivery =
                reencode ? .rendered(fileExtension: output.resolvedFormat.fileExtension) : .originals
            let queue: SessionQueue
            do throws(ScriptError) {
                queue = try QueuePlanner.plan(timeline, delivery: delivery)
            } catch {
                throw SessionError(
                    .invalidSetting,
                    lines: error.problems.map { "Cannot write the queue of \(script.id): \($0)" },
                    underlyingError: error
                )
            }
            // Re-encoding every item blocks for as long as it takes: on the pool's threads.
            try QueueWriter.write(
                queue,
                of: timeline,
                to: folder,
                encoder: job.encoder,
                replaceExisting: output.replaceExisting,
                progress: progress
            )
            return (queue, RenderOutcome(timeline: timeline, clips: prepared, warnings: job.warnings.all))
        }
    }
}
