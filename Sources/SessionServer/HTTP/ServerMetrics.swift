internal import Prometheus

/// What `GET /metrics` reports, in Prometheus' text format, named as Prometheus' conventions
/// say (a `render_session` namespace, base units, `_total` on counters).
final class ServerMetrics: Sendable {
    let registry: PrometheusCollectorRegistry
    /// Renders made, by outcome: `rendered` (201), `existing` (200: the files were there),
    /// `failed` (4xx and 5xx from the render), `refused` (503: every slot and queue place taken),
    /// `timed_out` (503: past `--render-timeout`).
    private let renders: [String: Counter]
    /// How long each render that was made took, queueing included.
    private let renderDuration: DurationHistogram
    /// Renders running or waiting for a slot.
    private let inFlight: Gauge
    /// Clips a render or `/tts/synthesize` needed, by how they were had: `cached` or `synthesized`.
    private let clips: [String: Counter]
    /// Requests refused before any work, by reason: `unauthorized`, `too_large`.
    private let rejected: [String: Counter]

    init() {
        let registry = PrometheusCollectorRegistry()
        self.registry = registry
        func counter(_ name: String, _ help: String, label: String, values: [String]) -> [String: Counter] {
            let descriptor = MetricNameDescriptor(
                namespace: "render_session",
                metricName: name,
                unitName: "total",
                helpText: help
            )
            return Dictionary(
                uniqueKeysWithValues: values.map {
                    ($0, registry.makeCounter(descriptor: descriptor, labels: [(label, $0)]))
                }
            )
        }
        renders = counter(
            "renders",
            "Render requests answered, by outcome.",
            label: "outcome",
            values: ["rendered", "existing", "failed", "refused", "timed_out"]
        )
        clips = counter(
            "clips",
            "Clips renders and speech requests needed, by how they were had.",
            label: "source",
            values: ["cached", "synthesized"]
        )
        rejected = counter(
            "requests_rejected",
            "Requests refused before any work, by reason.",
            label: "reason",
            values: ["unauthorized", "too_large"]
        )
        renderDuration = registry.makeDurationHistogram(
            descriptor: MetricNameDescriptor(
                namespace: "render_session",
                metricName: "render_duration",
                unitName: "seconds",
                helpText: "Seconds from a render request's arrival to its files being written, queueing included."
            ),
            buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300].map {
                Duration.milliseconds(Int64($0 * 1_000))
            }
        )
        inFlight = registry.makeGauge(
            descriptor: MetricNameDescriptor(
                namespace: "render_session",
                metricName: "renders_in_flight",
                unitName: "",
                helpText: "Renders running or waiting for a slot."
            )
        )
    }

    func countRender(_ outcome: String) { renders[outcome]?.increment() }

    func countClips(cached: Int, synthesized: Int) {
        clips["cached"]?.increment(by: Int64(cached))
        clips["synthesized"]?.increment(by: Int64(synthesized))
    }

    func countRejected(_ reason: String) { rejected[reason]?.increment() }

    func recordRenderDuration(_ duration: Duration) { renderDuration.record(duration) }

    func setInFlight(_ count: Int) { inFlight.set(Double(count)) }

    /// The whole exposition, as `GET /metrics` answers it.
    var text: [UInt8] { registry.emitToBuffer() }
}
