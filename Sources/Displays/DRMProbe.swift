internal import CDRM
#if canImport(Glibc)
import Glibc
#endif

/// `errno`'s text.
func errnoText(_ code: Int32 = errno) -> String {
    guard let text = strerror(code) else { return "error \(code)" }
    return String(validatingCString: text) ?? "error \(code)"
}

/// One connected output found on a card: the connector, its modes and a CRTC that can drive it.
struct DRMOutput {
    var connectorID: UInt32
    var connectorName: String
    var crtcID: UInt32
    var crtcIndex: Int
    var modes: [drmModeModeInfo]
    var preferredIndex: Int
}

extension drmModeModeInfo {
    /// The mode's refresh rate in millihertz, from the pixel clock and totals.
    var refreshMillihertz: Int {
        let total = Int(htotal) * Int(vtotal)
        guard total > 0 else { return Int(vrefresh) * 1000 }
        return Int((Double(clock) * 1_000_000 / Double(total)).rounded())
    }

    var displayMode: DisplayMode {
        DisplayMode(width: Int(hdisplay), height: Int(vdisplay), refreshMillihertz: refreshMillihertz)
    }
}

/// Reading a card's connectors and modes. The corresponding C functions are `drmModeGetResources`,
/// `drmModeGetConnector`, `drmModeGetEncoder`.
enum DRMProbe {
    /// The `/dev/dri/card*` nodes present, in order.
    static func cardPaths() -> [String] {
        (0..<16).map { "/dev/dri/card\($0)" }.filter { access($0, F_OK) == 0 }
    }

    static func connectorTypeName(_ type: UInt32) -> String {
        let names: [UInt32: String] = [
            1: "VGA", 2: "DVI-I", 3: "DVI-D", 4: "DVI-A", 5: "Composite", 6: "SVIDEO", 7: "LVDS", 8: "Component",
            9: "DIN", 10: "DP", 11: "HDMI-A", 12: "HDMI-B", 13: "TV", 14: "eDP", 15: "Virtual", 16: "DSI", 17: "DPI",
            18: "Writeback", 19: "SPI", 20: "USB",
        ]
        return names[type] ?? "Unknown"
    }

    /// The first connected connector with modes (or the one named `preferredConnector`), and a CRTC for it.
    static func findOutput(fd: Int32, preferredConnector: String? = nil) -> DRMOutput? {
        guard let resources = drmModeGetResources(fd) else { return nil }
        defer { drmModeFreeResources(resources) }
        let crtcs = (0..<Int(resources.pointee.count_crtcs)).map { resources.pointee.crtcs[$0] }
        for index in 0..<Int(resources.pointee.count_connectors) {
            guard let connector = drmModeGetConnector(fd, resources.pointee.connectors[index]) else { continue }
            defer { drmModeFreeConnector(connector) }
            let c = connector.pointee
            let name = "\(connectorTypeName(c.connector_type))-\(c.connector_type_id)"
            if let preferredConnector, preferredConnector != name { continue }
            guard c.connection == DRM_MODE_CONNECTED, c.count_modes > 0 else { continue }
            let modes = (0..<Int(c.count_modes)).map { c.modes[$0] }
            let preferred = modes.firstIndex { $0.type & vitrine_drm_mode_type_preferred() != 0 } ?? 0
            guard let crtc = crtcFor(fd: fd, connector: c, crtcs: crtcs) else { continue }
            return DRMOutput(connectorID: c.connector_id, connectorName: name, crtcID: crtc.id, crtcIndex: crtc.index,
                             modes: modes, preferredIndex: preferred)
        }
        return nil
    }

    /// Whether the connector is connected, as the kernel last saw it (its hotplug interrupt or output
    /// polling keeps this current). `drmModeGetConnectorCurrent` does not force a probe, which on some
    /// drivers takes long enough to stall the render thread.
    static func isConnected(fd: Int32, connectorID: UInt32) -> Bool {
        guard let connector = drmModeGetConnectorCurrent(fd, connectorID) else { return false }
        defer { drmModeFreeConnector(connector) }
        return connector.pointee.connection == DRM_MODE_CONNECTED && connector.pointee.count_modes > 0
    }

    private static func crtcFor(fd: Int32, connector: drmModeConnector, crtcs: [UInt32]) -> (id: UInt32, index: Int)? {
        // The CRTC already driving it, else the first the encoders allow.
        if connector.encoder_id != 0, let encoder = drmModeGetEncoder(fd, connector.encoder_id) {
            defer { drmModeFreeEncoder(encoder) }
            if encoder.pointee.crtc_id != 0, let index = crtcs.firstIndex(of: encoder.pointee.crtc_id) {
                return (encoder.pointee.crtc_id, index)
            }
        }
        for index in 0..<Int(connector.count_encoders) {
            guard let encoder = drmModeGetEncoder(fd, connector.encoders[index]) else { continue }
            defer { drmModeFreeEncoder(encoder) }
            for (crtcIndex, crtc) in crtcs.enumerated() where encoder.pointee.possible_crtcs & (1 << UInt32(crtcIndex)) != 0 {
                return (crtc, crtcIndex)
            }
        }
        return nil
    }

    /// Picks `requested` (any rate when `rateGiven` is false) or the preferred mode.
    static func chooseMode(_ output: DRMOutput, requested: DisplayMode?, rateGiven: Bool) throws(DisplayError) -> drmModeModeInfo {
        guard let requested else { return output.modes[output.preferredIndex] }
        if let match = output.modes.first(where: { $0.displayMode.matches(requested, rateGiven: rateGiven) }) { return match }
        var seen: [String] = []
        for mode in output.modes where !seen.contains(mode.displayMode.description) { seen.append(mode.displayMode.description) }
        throw .modeUnavailable(requested: rateGiven ? requested.description : "\(requested.width)x\(requested.height)", available: seen)
    }

    /// The ids of an object's properties by name. The corresponding C function is `drmModeObjectGetProperties`.
    static func properties(fd: Int32, object: UInt32, type: UInt32) -> [String: UInt32] {
        guard let list = drmModeObjectGetProperties(fd, object, type) else { return [:] }
        defer { drmModeFreeObjectProperties(list) }
        var result: [String: UInt32] = [:]
        for index in 0..<Int(list.pointee.count_props) {
            guard let property = drmModeGetProperty(fd, list.pointee.props[index]) else { continue }
            defer { drmModeFreeProperty(property) }
            let name = withUnsafeBytes(of: property.pointee.name) { bytes in
                String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
            result[name] = property.pointee.prop_id
        }
        return result
    }

    /// The value of property `name` on an object (the plane `type`), if it has one.
    static func propertyValue(fd: Int32, object: UInt32, type: UInt32, name: String) -> UInt64? {
        guard let list = drmModeObjectGetProperties(fd, object, type) else { return nil }
        defer { drmModeFreeObjectProperties(list) }
        for index in 0..<Int(list.pointee.count_props) {
            guard let property = drmModeGetProperty(fd, list.pointee.props[index]) else { continue }
            defer { drmModeFreeProperty(property) }
            let propertyName = withUnsafeBytes(of: property.pointee.name) { bytes in
                String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
            if propertyName == name { return list.pointee.prop_values[index] }
        }
        return nil
    }

    /// The primary plane that can show on the CRTC at `crtcIndex`.
    static func primaryPlane(fd: Int32, crtcIndex: Int) -> UInt32? {
        guard let planes = drmModeGetPlaneResources(fd) else { return nil }
        defer { drmModeFreePlaneResources(planes) }
        for index in 0..<Int(planes.pointee.count_planes) {
            let id = planes.pointee.planes[index]
            guard let plane = drmModeGetPlane(fd, id) else { continue }
            let possible = plane.pointee.possible_crtcs
            drmModeFreePlane(plane)
            guard possible & (1 << UInt32(crtcIndex)) != 0 else { continue }
            if propertyValue(fd: fd, object: id, type: vitrine_drm_mode_object_plane(), name: "type")
                == UInt64(vitrine_drm_plane_type_primary()) {
                return id
            }
        }
        return nil
    }
}
