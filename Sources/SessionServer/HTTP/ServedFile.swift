internal import Foundation
internal import Hummingbird
internal import SessionTimeline

/// `GET` and `HEAD /v1/renders/NAME`: a render's file, by a name that is an id and a suffix,
/// never a path; with byte ranges (RFC 9110), a strong `ETag` and `Cache-Control: immutable`.
enum ServedFile {
    /// The suffixes a render's files have, and each one's media type.
    static let mediaTypes: [String: String] = [
        "wav": "audio/wav", "flac": "audio/flac", "chapters.vtt": "text/vtt; charset=utf-8", "mp3": "audio/mpeg",
        "opus": "audio/ogg; codecs=opus",
        "ogg": "audio/ogg", "m4a": "audio/mp4", "m4b": "audio/mp4", "timeline.json": "application/json",
        "vtt": "text/vtt; charset=utf-8",
    ]

    /// The media type of a served file's `name` (`ID.SUFFIX`, the id 32 lowercase hexadecimal
    /// digits), or `nil` when it is not one.
    static func mediaType(of name: String) -> String? {
        let id = name.prefix(32)
        guard id.count == 32, id.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else {
            return nil
        }
        let rest = name.dropFirst(32)
        guard rest.first == "." else { return nil }
        return mediaTypes[String(rest.dropFirst())]
    }

    static func response(
        to request: Request,
        name: String,
        folder: String,
        context: some RequestContext
    ) async throws -> Response {
        guard let type = mediaType(of: name) else {
            return RenderServer.error(.notFound, ["\(name.prefix(80)): not a render's file (ID.EXT)"])
        }
        let path = "\(folder)/\(name)"
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
            attributes[.type] as? FileAttributeType == .typeRegular,
            let size = (attributes[.size] as? NSNumber)?.int64Value
        else {
            return RenderServer.error(.notFound, ["\(name): no such render"])
        }
        // A URL's bytes never change (the id digests everything that decides them), so the
        // name is a strong validator.
        let tag = "\"\(name)\""
        var headers: HTTPFields = [
            .contentType: type,
            .acceptRanges: "bytes",
            .eTag: tag,
            .cacheControl: "public, max-age=31536000, immutable",
        ]
        if let match = request.headers[.ifNoneMatch],
            match == "*"
                || match.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == tag })
        {
            return Response(status: .notModified, headers: headers)
        }
        var range = ByteRange(header: request.headers[.range], size: size)
        if let condition = request.headers[.ifRange], condition != tag { range = .whole }
        let isHead = request.method == .head
        switch range {
        case .unsatisfiable:
            headers[.contentRange] = "bytes */\(size)"
            headers[.contentType] = nil
            headers[.contentLength] = "0"
            return Response(status: .rangeNotSatisfiable, headers: headers)
        case .whole:
            headers[.contentLength] = String(size)
            guard !isHead, size > 0 else { return Response(status: .ok, headers: headers) }
            let body = try await FileIO().loadFile(path: path, context: context)
            return Response(status: .ok, headers: headers, body: body)
        case .part(let bytes):
            headers[.contentRange] = "bytes \(bytes.lowerBound)-\(bytes.upperBound)/\(size)"
            headers[.contentLength] = String(bytes.upperBound - bytes.lowerBound + 1)
            guard !isHead else { return Response(status: .partialContent, headers: headers) }
            let body = try await FileIO().loadFile(
                path: path,
                range: Int(bytes.lowerBound)...Int(bytes.upperBound),
                context: context
            )
            return Response(status: .partialContent, headers: headers, body: body)
        }
    }
}
