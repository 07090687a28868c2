import Audio
import Displays
import ServiceLifecycle

/// The display as a service: it runs until the group shuts down, then stops rendering and
/// releases the device (on KMS: puts back the CRTC state found at start and drops DRM master).
struct DisplayService: Service, CustomStringConvertible {
    let display: any Display

    var description: String { "display \(display.name)" }

    func run() async throws {
        try? await gracefulShutdown()
        display.stop()
    }
}

/// The sound as a service: it runs until the group shuts down, then stops what plays into the
/// output (music, announcements, the soundtrack's input) and drains and closes the PCM.
struct AudioService: Service, CustomStringConvertible {
    let output: ALSAOutput
    /// Stops the players and inputs mixed into the output, before it stops.
    let stopInputs: @Sendable () -> Void

    var description: String { "audio output \(output.configuration.deviceName)" }

    func run() async throws {
        try? await gracefulShutdown()
        stopInputs()
        output.stop(drain: true)
    }
}

/// The presentation log as a service: it runs until the group shuts down, then writes out what it
/// buffered and closes the file. The last to stop, so it records everything the others did.
struct PresentationLogService: Service, CustomStringConvertible {
    let close: @Sendable () -> Void

    var description: String { "presentation log" }

    func run() async throws {
        try? await gracefulShutdown()
        close()
    }
}
