/// A coding key made from a name or an index, for errors that name a place in a file
/// (`items[2]`, `source`) found after the value there was decoded.
struct PathKey: CodingKey {
    var stringValue: String
    var intValue: Int?

    init(_ string: String) {
        stringValue = string
    }

    init(_ index: Int) {
        stringValue = String(index)
        intValue = index
    }

    init?(stringValue: String) {
        self.stringValue = stringValue
    }

    init?(intValue: Int) {
        self.init(intValue)
    }
}
