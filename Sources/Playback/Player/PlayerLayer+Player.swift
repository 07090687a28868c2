public import MediaSinks

/// A ``PlayerLayer`` shows a ``Player``: as `AVPlayerLayer(player:)` and its `player`.
extension PlayerLayer {
    /// A layer showing `player` (taken out of the layer or sink it showed in before), named `name`
    /// in the presentation log (default `layer-N`). Add it to a display with `display.layers.add(_:)`.
    public convenience init(player: Player?, name: String? = nil) {
        self.init(name: name)
        self.player = player
    }

    /// The player whose pictures the layer shows, or nil.
    ///
    /// Setting it takes the previous player out of the layer (it keeps playing, but shows nothing
    /// and its video waits until it has a video sink again) and takes the new one out of wherever it
    /// was shown (another layer, a display's own layer): a player is in one layer at a time, and a
    /// layer shows one player. The layer shows the new player's current picture at the display's
    /// next refresh. The layer does not keep the player alive.
    public var player: Player? {
        get { (source as? PlayerCore)?.owner }
        set {
            withPlayerAssignment {
                let current = source as? PlayerCore
                guard current !== newValue?.core else { return }
                current?.removeVideoSink(ifItIs: self)
                newValue?.core.setVideoSink(self)
            }
        }
    }
}
