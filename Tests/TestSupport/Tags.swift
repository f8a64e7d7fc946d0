public import Testing

extension Tag {
    /// Suites that start threads or run work at once: batches, preparing with several jobs and the
    /// HTTP providers, the cache's locks, signals and interrupts, streaming, the encoders' worker
    /// threads, the mixer's read-ahead, Piper's worker processes, and the commands that use them.
    /// CI (`.ci/run`) runs exactly these under the thread sanitizer; the rest is single-threaded
    /// code that the address-sanitized run covers, and under TSan it only took time.
    @Tag public static var concurrent: Self
}
