internal import CSndFile

/// libsndfile's error codes as its own words, each with the code kept for an ``AudioError``.
enum SoundFileError {
    /// The error libsndfile last reported for `file`, or with `nil` for the last `sf_open…` that
    /// failed: `Format not recognised.`. The corresponding libsndfile calls are `sf_error` and `sf_strerror`.
    static func last(_ file: OpaquePointer?) -> LibraryMessage {
        LibraryMessage(String(cString: sf_strerror(file)), .libsndfile, sf_error(file))
    }

    /// libsndfile's words for `code`, a result one of its calls returned.
    /// The corresponding libsndfile call is `sf_error_number`.
    static func message(_ code: Int32) -> LibraryMessage {
        LibraryMessage(String(cString: sf_error_number(code)), .libsndfile, code)
    }
}
