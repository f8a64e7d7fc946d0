/// An audio file told apart from every other by its size and SHA-256: the file a render wrote,
/// recorded in its timeline (``Timeline/audioFile``), so that `verify`, `show` and the preview
/// page refuse to describe a file by the plan of another render (an older one left beside it,
/// another session's) instead of reporting the wrong file as correct.
package struct AudioFileStamp: Sendable, Equatable, Codable {
    /// The file's size in bytes.
    package var bytes: Int64
    /// The SHA-256 of its bytes: 64 lowercase hexadecimal digits.
    package var sha256: String

    package init(bytes: Int64, sha256: String) {
        self.bytes = bytes
        self.sha256 = sha256
    }

    private enum CodingKeys: String, CodingKey { case bytes, sha256 }

    /// Reads a stamp, refusing a negative size or a digest that is not 64 lowercase hexadecimal
    /// digits: a timeline comes from others, and a digest of any other form matches no file.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        bytes = try container.decode(Int64.self, forKey: .bytes)
        sha256 = try container.decode(String.self, forKey: .sha256)
        guard bytes >= 0 else {
            throw DecodingError.dataCorruptedError(
                forKey: .bytes,
                in: container,
                debugDescription: "a size is not negative"
            )
        }
        guard sha256.utf8.count == 64, sha256.utf8.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) })
        else {
            throw DecodingError.dataCorruptedError(
                forKey: .sha256,
                in: container,
                debugDescription: "a SHA-256 is 64 lowercase hexadecimal digits"
            )
        }
    }
}
