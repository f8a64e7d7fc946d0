// swift-tools-version: 6.2

import PackageDescription

let package = Package(
    name: "render-session",
    products: [
        // SessionTimeline is the vocabulary SessionKit's API speaks (scripts, frames, timelines).
        .library(name: "SessionKit", targets: ["SessionKit", "SessionTimeline"]),
        .executable(name: "render-session", targets: ["render-session"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.81.0"),
        .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.2"),
        // FilePath, the path type swift-subprocess's `run` takes.
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
    ],
    targets: [
        // C libraries, one system-library target each (Debian packages in `providers`).
        .systemLibrary(
            name: "CMPG123",
            pkgConfig: "libmpg123",
            providers: [.apt(["libmpg123-dev"])]
        ),
        .systemLibrary(
            name: "CSndFile",
            pkgConfig: "sndfile",
            providers: [.apt(["libsndfile1-dev"])]
        ),
        .systemLibrary(
            name: "CSoxr",
            pkgConfig: "soxr",
            providers: [.apt(["libsoxr-dev"])]
        ),
        .systemLibrary(
            name: "CFLAC",
            pkgConfig: "flac",
            providers: [.apt(["libflac-dev"])]
        ),
        // libvorbis with libogg, whose types its interface is written in.
        .systemLibrary(
            name: "CVorbis",
            pkgConfig: "vorbis",
            providers: [.apt(["libvorbis-dev", "libogg-dev"])]
        ),
        .systemLibrary(
            name: "CLame",
            pkgConfig: "lame",
            providers: [.apt(["libmp3lame-dev"])]
        ),
        .systemLibrary(
            name: "COpus",
            pkgConfig: "opus",
            providers: [.apt(["libopus-dev"])]
        ),
        .systemLibrary(
            name: "CEbur128",
            pkgConfig: "libebur128",
            providers: [.apt(["libebur128-dev"])]
        ),
        // Drawing a session's picture as PNG (render-session show -o OUT.png).
        .systemLibrary(
            name: "CCairo",
            pkgConfig: "cairo",
            providers: [.apt(["libcairo2-dev"])]
        ),
        // FFmpeg's own libraries: AAC in MP4 (M4A, M4B) written and read, and the other containers
        // libsndfile and libmpg123 cannot read (CAF holding AAC or ALAC, raw ADTS).
        .systemLibrary(
            name: "CFFmpeg",
            pkgConfig: "libavformat",
            providers: [.apt(["libavformat-dev", "libavcodec-dev", "libavutil-dev"])]
        ),
        // Headers only, no pkg-config link flags: SessionAudio opens libespeak-ng with dlopen.
        .systemLibrary(
            name: "CEspeakNG",
            providers: [.apt(["libespeak-ng-dev"])]
        ),

        // Pure model: scripts, frames, planning, the seeded generator. No C, no I/O.
        .target(name: "SessionTimeline"),

        // The only module that touches C: decoding, resampling, writing, encoding, synthesis, and
        // drawing pictures.
        .target(
            name: "SessionAudio",
            dependencies: [
                "SessionTimeline", "CMPG123", "CSndFile", "CSoxr", "CLame", "COpus", "CEspeakNG", "CEbur128",
                "CFLAC", "CVorbis", "CCairo", "CFFmpeg",
            ]
        ),

        // The library users call: joins the timeline model and the audio I/O.
        .target(
            name: "SessionKit",
            dependencies: [
                "SessionTimeline",
                "SessionAudio",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                // SpeechProvider uses NIO's types directly (deadlines, HTTP heads, connection errors).
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                // The Piper voice's long-lived worker processes.
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),

        // The command: parses arguments, calls SessionKit, prints.
        .executableTarget(
            name: "render-session",
            dependencies: [
                "SessionKit",
                "SessionTimeline",
                // Only for its system calls: standard output and error, the terminal, signals.
                "SessionAudio",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            plugins: ["BuildCommit"]
        ),
        // Writes the commit the command is built from into it, for --version.
        .plugin(name: "BuildCommit", capability: .buildTool()),

        .target(
            name: "TestSupport",
            dependencies: [
                "SessionKit",
                // The child processes the tests run, awaited without blocking a thread (ChildProcess).
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            path: "Tests/TestSupport",
            exclude: ["tts-server.py"]
        ),
        .testTarget(name: "SessionTimelineTests", dependencies: ["SessionTimeline"]),
        .testTarget(
            name: "SessionAudioTests",
            // CEbur128 for libebur128's own true-peak mode, the independent meter the tests compare with;
            // CSndFile to read a WAV's cue points back as libsndfile's reader sees them.
            dependencies: ["SessionAudio", "SessionTimeline", "TestSupport", "CEbur128", "CSndFile"]
        ),
        .testTarget(
            name: "SessionKitTests",
            dependencies: ["SessionKit", "SessionTimeline", "SessionAudio", "TestSupport"]
        ),
        .testTarget(
            name: "RenderSessionTests",
            dependencies: ["render-session", "TestSupport", "SessionKit", "SessionTimeline", "SessionAudio"]
        ),
    ]
)

// The libFuzzer targets that need SessionKit (and so SwiftNIO and swift-crypto), only when
// scripts/fuzz asks for them: `swift build --sanitize=fuzzer` links libFuzzer's own `main`, which
// an ordinary build lacks.
if Context.environment["RENDER_SESSION_FUZZ"] == "1" {
    package.targets.append(
        .executableTarget(
            name: "fuzz-sessionkit",
            dependencies: ["SessionKit", "SessionTimeline", "SessionAudio"],
            path: "Fuzz/SessionKit",
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        )
    )
}

// A clean build is a rule: CI (`.ci/run`, `scripts/test` with CI=true) sets this, and a warning in
// any of our targets fails it. Left off elsewhere, so that a newer compiler's new warning never
// stops a user's build; SwiftPM applies none of it to the packages we depend on.
let warningsAreErrors = Context.environment["RENDER_SESSION_WARNINGS_AS_ERRORS"] == "1"

// The same language settings for every Swift target, as swift-crypto applies its own.
for target in package.targets where target.type != .system && target.type != .plugin {
    target.swiftSettings =
        (target.swiftSettings ?? []) + [
            .swiftLanguageMode(.v6),
            .enableUpcomingFeature("ExistentialAny"),
            .enableUpcomingFeature("MemberImportVisibility"),
            .enableUpcomingFeature("InternalImportsByDefault"),
        ] + (warningsAreErrors ? [.treatAllWarnings(as: .error)] : [])
}
