/// An 8-bit-per-channel colour, not premultiplied: one type for the schedule format that writes it
/// and the compositor that draws it.
public struct RGBAColor: Sendable, Hashable, CustomStringConvertible {
    public var red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8

    public init(red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8 = 255) {
        self.red = red
        self.green = green
        self.blue = blue
        self.alpha = alpha
    }

    public static let white = RGBAColor(red: 255, green: 255, blue: 255)
    public static let black = RGBAColor(red: 0, green: 0, blue: 0)
    /// Black at 60 % opacity: the default box behind subtitles and text.
    public static let translucentBlack = RGBAColor(red: 0, green: 0, blue: 0, alpha: 153)

    /// Parses `#RRGGBB` or `#RRGGBBAA` exactly as schedules write them (the `#` is required).
    public init?(parsing text: String) {
        guard text.hasPrefix("#") else { return nil }
        self.init(hex: text)
    }

    /// Parses `#RRGGBB` or `#RRGGBBAA` (the `#` is optional).
    public init?(hex: String) {
        let digits = hex.hasPrefix("#") ? hex.dropFirst() : Substring(hex)
        guard digits.count == 6 || digits.count == 8, digits.allSatisfy(\.isHexDigit),
              let value = UInt32(digits, radix: 16) else { return nil }
        let full = digits.count == 6 ? (value << 8) | 0xFF : value
        self.init(red: UInt8(full >> 24), green: UInt8((full >> 16) & 0xFF),
                  blue: UInt8((full >> 8) & 0xFF), alpha: UInt8(full & 0xFF))
    }

    /// `#RRGGBBAA`, upper-case.
    public var description: String {
        let hex = [red, green, blue, alpha].map { byte in
            let digits = String(byte, radix: 16, uppercase: true)
            return digits.count == 1 ? "0" + digits : digits
        }
        return "#" + hex.joined()
    }
}
