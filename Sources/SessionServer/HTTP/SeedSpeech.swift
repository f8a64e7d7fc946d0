internal import Foundation
internal import Hummingbird

/// `POST /tts/synthesize`: the TTS proxy of seed 000's backend, so that the seed apps' client
/// (`APIClient.synthesizeSpeech(text:)`) works against this server unchanged.
///
/// The contract, as the seed's backend has it: `{"text": "…"}`, 1 to 5,000 characters (counted
/// as JavaScript counts them, in UTF-16 units) → `{"success": true, "data": {"audio": "<base64
/// MP3>"}}`; an invalid body is 400 `{"success": false, "error": {"code": "VALIDATION_ERROR",
/// "message": …}}`. The clip comes from the server's clip cache in its voice, synthesized into it
/// when missing, exactly the clip a render of the same text uses.
enum SeedSpeech {
    /// The most characters a text may have.
    static let maximumCharacters = 5_000
    /// The largest body read: 5,000 characters of four UTF-8 bytes each, escaped, with room.
    static let maximumBodyBytes = 64 << 10

    static func synthesize(_ request: Request, service: RenderService, metrics: ServerMetrics) async throws -> Response
    {
        let body: Data
        switch try await RenderServer.body(
            of: request,
            limit: maximumBodyBytes,
            metrics: metrics,
            tooLarge: {
                failure(.contentTooLarge, code: "PAYLOAD_TOO_LARGE", $0)
            }
        ) {
        case .read(let data): body = data
        case .refused(let response): return response
        }
        guard case .object(let fields) = try? JSONDecoder().decode(JSONValue.self, from: body),
            case .string(let text) = fields["text"]
        else {
            return failure(.badRequest, code: "VALIDATION_ERROR", "text: a string is required")
        }
        guard (1...maximumCharacters).contains(text.utf16.count) else {
            return failure(.badRequest, code: "VALIDATION_ERROR", "text: 1 to \(maximumCharacters) characters")
        }
        guard !text.allSatisfy(\.isWhitespace) else {
            return failure(.badRequest, code: "VALIDATION_ERROR", "text: has nothing to say")
        }
        let audio: Data
        do {
            audio = try await service.speech(of: text)
        } catch let refusal as RenderService.Refusal {
            switch refusal {
            case .failed(let lines, let status):
                return failure(HTTPResponse.Status(code: status), code: "TTS_ERROR", lines.first ?? "")
            case .busy, .timedOut:
                return failure(.serviceUnavailable, code: "TTS_ERROR", "the speech could not be had now; try again")
            }
        }
        return RenderServer.json(.ok, Success(data: .init(audio: audio.base64EncodedString())))
    }

    private struct Success: Encodable {
        var success = true
        var data: Audio
        struct Audio: Encodable { var audio: String }
    }

    private struct Failure: Encodable {
        var success = false
        var error: Detail
        struct Detail: Encodable {
            var code: String
            var message: String
        }
    }

    private static func failure(_ status: HTTPResponse.Status, code: String, _ message: String) -> Response {
        RenderServer.json(status, Failure(error: .init(code: code, message: message)))
    }
}
