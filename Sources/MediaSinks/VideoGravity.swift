/// How video fills the rectangle it is shown in, as `AVLayerVideoGravity`: one type for the
/// displays that apply it, the schedule format that names it and the command line.
///
/// The raw values are the names schedules and the command line use.
public enum VideoGravity: String, Sendable, Hashable, CaseIterable {
    /// Fit inside, keeping the aspect ratio: letterbox or pillarbox bars. Named "fit".
    case resizeAspect = "fit"
    /// Fill, keeping the aspect ratio: the overflow is cropped. Named "fill".
    case resizeAspectFill = "fill"
    /// Stretch to the rectangle, ignoring the aspect ratio. Named "stretch".
    case resize = "stretch"

    /// The command line's names: `fit`, `fill`, `stretch`.
    public init?(commandLineName: String) {
        self.init(rawValue: commandLineName)
    }
}
