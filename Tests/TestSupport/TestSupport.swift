public import Foundation
public import Testing

/// Paths and helpers the test targets share.
public enum Repository {
    /// The repository's root folder, found from this file's path.
    public static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `Fixtures/` in the repository.
    public static let fixtures = root.appendingPathComponent("Fixtures")

    /// The fixture clip cache.
    public static let cache = fixtures.appendingPathComponent("cache")

    /// A fixture script by id.
    public static func script(_ id: String) -> URL {
        fixtures.appendingPathComponent("scripts/\(id).json")
    }

    /// `../shared/vectors` beside the repository, if this machine has it.
    public static let vectors: URL? = {
        let url = root.deletingLastPathComponent().appendingPathComponent("shared/vectors")
        return FileManager.default.fileExists(atPath: url.path) ? url : nil
    }()

    /// The path of a file under `../shared/vectors`.
    ///
    /// A test that calls this carries ``Testing/Trait/requiresVectors`` (on itself or its suite), so
    /// where the folder is absent it is reported as skipped, with the reason, and never starts.
    /// - Throws: when the folder is absent, which means the test lacks that trait: the test fails
    ///   rather than passing silently. (`Test.cancel` would not do here: in Swift Testing 6.3.1 a
    ///   parameterized test whose cases cancel themselves is printed as passed.)
    public static func vector(_ relativePath: String) throws -> String {
        guard let vectors else { throw MissingVectors(relativePath: relativePath) }
        return vectors.appendingPathComponent(relativePath).path
    }

    /// A test read `../shared/vectors` without carrying ``Testing/Trait/requiresVectors``.
    struct MissingVectors: Error, CustomStringConvertible {
        let relativePath: String
        var description: String {
            "../shared/vectors is absent, so \(relativePath) cannot be read; mark the test .requiresVectors to skip it here"
        }
    }

    /// The built `render-session` binary, next to the test bundle.
    public static var binary: URL {
        let bundle = Bundle.main.bundleURL
        let folder = bundle.pathExtension == "xctest" ? bundle.deletingLastPathComponent() : bundle
        return folder.appendingPathComponent("render-session")
    }
}

extension Trait where Self == ConditionTrait {
    /// Runs a test only where `../shared/vectors` exists; elsewhere `swift test` reports it as
    /// skipped, with the reason.
    public static var requiresVectors: Self {
        .enabled(if: Repository.vectors != nil, "../shared/vectors is absent")
    }
}

/// What `Fixtures/clips.json` records about each fixture clip.
public struct FixtureClip: Decodable, Sendable {
    public let key: String
    public let text: String
    public let sampleRate: Int
    public let channels: Int
    /// The frame count of the PCM the MP3 was encoded from.
    public let sourceFrames: Int64

    public static func all() throws -> [FixtureClip] {
        struct Manifest: Decodable { let clips: [FixtureClip] }
        let data = try Data(contentsOf: Repository.fixtures.appendingPathComponent("clips.json"))
        return try JSONDecoder().decode(Manifest.self, from: data).clips
    }

    public var path: String { Repository.cache.appendingPathComponent("\(key).mp3").path }
}

/// A fresh temporary folder, removed when the value is deinitialized.
public final class TemporaryFolder: @unchecked Sendable {
    // @unchecked: `url` is immutable after init; nothing else is stored.
    public let url: URL

    public init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("render-session-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    public func path(_ name: String) -> String {
        url.appendingPathComponent(name).path
    }

    /// The names in the folder, sorted.
    public func contents() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: url.path).sorted()
    }
}
