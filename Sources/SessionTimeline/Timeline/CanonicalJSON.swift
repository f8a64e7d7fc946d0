package import Foundation

/// The one way the project writes JSON files: pretty-printed, keys sorted (so equal values are
/// equal bytes), slashes unescaped, a final newline.
package enum CanonicalJSON {
    package static func encode(_ value: some Encodable) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        guard var data = try? encoder.encode(value) else {
            preconditionFailure("\(type(of: value)) always encodes")
        }
        data.append(0x0A)
        return data
    }
}
