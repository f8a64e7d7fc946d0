/// `sin`, `cos` and `exp` written out in plain IEEE double arithmetic, so that what is computed
/// with them is the same bit for bit on every machine and with every C library.
///
/// The C library's versions are correctly rounded on some systems and not on others, and glibc
/// has changed its algorithms between releases; a synthesized sound made with them could differ
/// in its last bits from machine to machine. These are slower and a few units in the last place
/// less accurate, which does not matter for sound; what matters is that they are fixed. Each is a
/// range reduction by an exactly rounded operation (`rounded()`, a multiplication by a power of
/// two) followed by a Taylor polynomial evaluated in a fixed order. Swift does not fuse
/// multiplications and additions unless asked, so the order written is the order computed.
enum PortableMath {
    static let pi = 3.141_592_653_589_793
    static let twoPi = 6.283_185_307_179_586
    static let halfPi = 1.570_796_326_794_896_6
    static let ln2 = 0.693_147_180_559_945_3
    static let ln10 = 2.302_585_092_994_046

    /// The sine of `x` radians, to within about 1e-15 for |x| < 10⁶.
    static func sin(_ x: Double) -> Double {
        let r = x - (x / twoPi).rounded() * twoPi  // in [−π, π]
        let r2 = r * r
        // r − r³/3! + r⁵/5! − …, to r²⁹, by Horner's rule from the highest term.
        var sum = 0.0
        var n = 29.0
        while n > 1 {
            sum = 1 - sum * r2 / ((n - 1) * n)
            n -= 2
        }
        return r * sum
    }

    /// The cosine of `x` radians, to within about 1e-15 for |x| < 10⁶.
    static func cos(_ x: Double) -> Double {
        let r = x - (x / twoPi).rounded() * twoPi
        let r2 = r * r
        // 1 − r²/2! + r⁴/4! − …, to r³⁰.
        var sum = 0.0
        var n = 30.0
        while n > 0 {
            sum = 1 - sum * r2 / ((n - 1) * n)
            n -= 2
        }
        return sum
    }

    /// e to the power `x`, to within a few units in the last place for −700 < x < 700.
    static func exp(_ x: Double) -> Double {
        let k = (x / ln2).rounded()
        let r = x - k * ln2  // |r| ≤ ln 2 / 2
        var sum = 1.0
        var n = 18.0
        while n > 0 {
            sum = 1 + sum * r / n
            n -= 1
        }
        return sum * Double(sign: .plus, exponent: Int(k), significand: 1)
    }

    /// 10 to the power `decibels / 20`: the linear gain of a level in decibels.
    static func gain(decibels: Double) -> Double {
        exp(decibels / 20 * ln10)
    }
}
