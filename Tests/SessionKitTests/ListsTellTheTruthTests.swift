import Foundation
import SessionAudio
import SessionKit
import SessionTimeline
import TestSupport
import Testing

/// Issue 24: every voice `voices` lists as available speaks, and every sound `sounds` lists plays.
@Suite("What voices and sounds list is what renders")
struct ListsTellTheTruthTests {
    @Test("Every available eSpeak NG and Piper voice `voices` lists prepares a clip of a short text")
    func everyListedVoiceSpeaks() async throws {
        let folder = try TemporaryFolder()
        let catalog = VoiceCatalog()
        let local = catalog.voices.filter { $0.available && ["espeak", "piper"].contains($0.provider) }
        #expect(local.count >= 100, "eSpeak NG lists about 130 voices; \(local.count) were listed")
        let provider = try ProviderSettings.local().makeProvider()
        var failures: [String] = []
        for voice in local {
            let pipeline = SessionPipeline(
                clips: ClipIdentity(cacheFolder: folder.path("cache"), voice: Voice(id: voice.id)),
                plan: PlanSettings(sound: SoundSettings(loudness: .off)),
                source: .provider(provider)
            )
            do {
                let prepared = try await pipeline.prepare(texts: ["Hello."])
                if prepared.synthesized != 1 || !prepared.problems.isEmpty {
                    failures.append("\(voice.id): \(prepared.problemLines())")
                }
            } catch {
                failures.append("\(voice.id): \(error)")
            }
        }
        await provider.releaseVoices()
        #expect(failures.isEmpty, "\(failures)")
    }

    @Test("Every sound the default library lists is found and decodes to at least one frame")
    func everyListedSoundPlays() throws {
        let folder = try TemporaryFolder()
        let library = try SoundLibrary.open(folder: nil, environment: ["XDG_CACHE_HOME": folder.path("xdg")])
        let listing = library.listing()
        #expect(listing.count == 18, "the 16 before and the app's silent and forest beds")
        for item in listing {
            guard case .found(let path, _) = item.lookup else {
                Issue.record("\(item.entry.id) is listed but not found")
                continue
            }
            #expect(try AudioFileDecoder.measure(path: path).frameCount > .zero, "\(item.entry.id)")
        }
    }
}
