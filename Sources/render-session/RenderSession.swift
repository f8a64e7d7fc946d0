import ArgumentParser
import SessionKit

/// `render-session`: turns a guided-session script into one gapless audio file.
@main
struct RenderSession: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render-session",
        abstract: "Render a guided-meditation script into one gapless audio file.",
        discussion: """
            A script (the app backend's GuidedMeditationScript JSON) says what is spoken when. \
            Every text's clip comes from a content-addressed cache of MP3 files, filled on demand \
            by the embedded eSpeak NG voice, Piper's natural voices offline (render-session \
            voices lists them), the app backend's TTS proxy or an OpenAI-compatible speech server; the clips, exact silences, randomized interjections and a closing bell \
            become one audio file (WAV, FLAC, MP3, Opus or Ogg Vorbis), and the plan of it a \
            timeline JSON.

            Exit statuses: 0 done; 1 the work failed (nothing half-written is left); 64 a usage \
            error (an unknown option, a value out of range); 130 or 143 interrupted by SIGINT or \
            SIGTERM (unfinished files removed).

            Example:
              render-session render Fixtures/scripts/ten-minute-session.json \\
                -o out/session.wav --cache Fixtures/cache --seed 7
            """,
        version: SessionKitVersion.current,
        subcommands: [
            RenderCommand.self, TimelineCommand.self, PrepareCommand.self, BatchCommand.self, ImportCommand.self,
            ListCommand.self, QueueCommand.self, SilenceCommand.self, SoundsCommand.self, VerifyCommand.self,
            PositionCommand.self, VoicesCommand.self,
        ]
    )
}
