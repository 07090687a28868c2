// Display and Schedule both declare `Overlay`, `VideoGravity` and `RGBAColor` (one for the screen, one for
// the file format). These aliases give the screen's types distinct names inside ShowRunner; this file
// imports only Display so the names below are unambiguous.
public import Display

/// An overlay layer as the compositor draws it.
typealias ScreenOverlay = Overlay
/// How the video fills the screen, as the compositor understands it.
public typealias ScreenGravity = VideoGravity
/// A colour as the compositor takes it.
typealias ScreenColor = RGBAColor
/// A text overlay's looks, as the compositor takes them.
typealias ScreenTextStyle = TextStyle
