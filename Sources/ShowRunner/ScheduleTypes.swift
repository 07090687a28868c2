// The schedule format's types under distinct names (see ScreenTypes.swift); this file imports only Schedule.
import Schedule

/// An overlay as the schedule file describes it.
typealias ScheduledOverlay = Overlay
/// A gravity as the schedule file names it.
typealias ScheduledGravity = VideoGravity
/// A colour as the schedule file writes it.
typealias ScheduledColor = RGBAColor
