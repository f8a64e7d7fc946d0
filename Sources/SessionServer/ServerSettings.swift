public import SessionKit

/// How `render-session serve` runs: where it listens, what it renders with, its limits.
public struct ServerSettings: Sendable {
    /// The address to listen on; 127.0.0.1 unless the service is meant to be reached from elsewhere.
    public var host: String
    /// The port; 0 takes a free one, which the ``RenderServer/run(_:log:listening:)`` callback names.
    public var port: Int
    /// Every render's settings but the script's seed and what is written: the clip cache, voice,
    /// speech source, sounds and plan, as the render command's options make them.
    public var pipeline: SessionPipeline
    /// Where renders are written, each as files named by its id.
    public var outputFolder: String
    /// Renders at once; as many again wait, and more are refused with 503.
    public var maximumRenders: Int
    /// The bearer token every `/v1` request must carry; `nil` asks for none.
    public var token: String?
    /// The largest request body read, in bytes; a larger one is refused with 413.
    public var maximumBodyBytes: Int
    /// The longest a render request waits for its render, queueing included: then 503, and a
    /// render no other request waits for is cancelled.
    public var renderDeadline: Duration

    public init(
        host: String = "127.0.0.1",
        port: Int = 8080,
        pipeline: SessionPipeline,
        outputFolder: String,
        maximumRenders: Int = 2,
        token: String? = nil,
        maximumBodyBytes: Int = 1 << 20,
        renderDeadline: Duration = .seconds(300)
    ) {
        self.host = host
        self.port = port
        self.pipeline = pipeline
        self.outputFolder = outputFolder
        self.maximumRenders = maximumRenders
        self.token = token
        self.maximumBodyBytes = maximumBodyBytes
        self.renderDeadline = renderDeadline
    }
}
