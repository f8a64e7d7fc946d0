// SessionKit is the one library users import: it brings the timeline model and the audio types with it.
@_exported public import SessionTimeline
@_exported public import SessionAudio
