internal import CEGL
import Synchronization
import Threading
#if canImport(Glibc)
import Glibc
#endif

/// Counts the users of each EGLDisplay. EGL hands every caller of the same platform and native display
/// the same EGLDisplay, and `eglTerminate` from one render thread would pull it from under another
/// (EGL_BAD_DISPLAY), so displays are initialised on first use and terminated after the last.
private let eglDisplayUsers = LockedValue<[UInt: Int]>([:])

private func retainDisplay(_ display: EGLDisplay) -> Bool {
    eglDisplayUsers.withLock { users in
        let key = UInt(bitPattern: display)
        if let count = users[key] {  // initialised already (a count of 0: kept initialised)
            users[key] = count + 1
            return true
        }
        var major: EGLint = 0, minor: EGLint = 0
        guard eglInitialize(display, &major, &minor) == EGL_TRUE else { return false }
        users[key] = 1
        return true
    }
}

/// Drops one use; the last use terminates the display when `terminate` (GBM displays, whose device is
/// destroyed next). The surfaceless display stays initialised for the process's life: terminating it
/// and then exiting corrupted the heap in Mesa's exit-time teardown now and then (about 1 run in 30).
private func releaseDisplay(_ display: EGLDisplay, terminate: Bool = true) {
    eglDisplayUsers.withLock { users in
        let key = UInt(bitPattern: display)
        let count = (users[key] ?? 1) - 1
        if count > 0 || !terminate {
            users[key] = max(count, 0)
        } else {
            users[key] = nil
            eglTerminate(display)
        }
    }
}

/// An EGL display, a GLES context and (on GBM) a window surface, current on the render thread.
///
/// Tries a GLES 3 context first and falls back to GLES 2; ``glesMajorVersion`` tells the
/// compositor which optional features (row-length uploads) it may use. Owned by one thread.
final class EGLRenderContext {
    let display: EGLDisplay
    let context: EGLContext
    private(set) var surface: EGLSurface?
    let config: EGLConfig?
    let glesMajorVersion: Int
    /// Whether ``destroy()`` terminates the display when it is the last user.
    private let terminatesDisplay: Bool

    /// A context on Mesa's surfaceless platform, drawing into FBOs only.
    ///
    /// The corresponding C functions are `eglGetPlatformDisplayEXT(EGL_PLATFORM_SURFACELESS_MESA)`,
    /// `eglInitialize`, `eglCreateContext` and `eglMakeCurrent`.
    static func surfaceless(maximumVersion: Int = 3) throws(DisplayError) -> EGLRenderContext {
        let display = vitrine_egl_get_platform_display(EGLenum(EGL_PLATFORM_SURFACELESS_MESA), nil, nil)
        guard let display, display != vitrine_egl_no_display() else {
            throw .egl("opening Mesa's surfaceless platform (EGL_MESA_platform_surfaceless)", eglGetError())
        }
        return try EGLRenderContext(display: display, surfaceType: EGL_PBUFFER_BIT, nativeVisual: nil,
                                    maximumVersion: maximumVersion, makeSurface: nil)
    }

    /// A context on a GBM device with a window surface on `gbmSurface` (the KMS display's scanout buffers).
    static func gbm(device: OpaquePointer, surface gbmSurface: OpaquePointer, format: UInt32) throws(DisplayError) -> EGLRenderContext {
        let display = vitrine_egl_get_platform_display(EGLenum(EGL_PLATFORM_GBM_KHR), UnsafeMutableRawPointer(device), nil)
        guard let display, display != vitrine_egl_no_display() else {
            throw .egl("opening the GBM platform", eglGetError())
        }
        return try EGLRenderContext(display: display, surfaceType: EGL_WINDOW_BIT, nativeVisual: format, maximumVersion: 3) { display, config in
            eglCreateWindowSurface(display, config, EGLNativeWindowType(UInt(bitPattern: Int(bitPattern: gbmSurface))), nil)
        }
    }

    private init(
        display: EGLDisplay, surfaceType: Int32, nativeVisual: UInt32?, maximumVersion: Int,
        makeSurface: ((EGLDisplay, EGLConfig) -> EGLSurface?)?
    ) throws(DisplayError) {
        guard retainDisplay(display) else { throw .egl("eglInitialize", eglGetError()) }
        guard eglBindAPI(EGLenum(EGL_OPENGL_ES_API)) == EGL_TRUE else {
            releaseDisplay(display)
            throw .egl("binding the GLES API", eglGetError())
        }
        let attributes: [EGLint] = [
            EGL_SURFACE_TYPE, surfaceType,
            EGL_RENDERABLE_TYPE, EGL_OPENGL_ES2_BIT,
            EGL_RED_SIZE, 8, EGL_GREEN_SIZE, 8, EGL_BLUE_SIZE, 8,
            EGL_NONE,
        ]
        var count: EGLint = 0
        eglChooseConfig(display, attributes, nil, 0, &count)
        var configs = [EGLConfig?](repeating: nil, count: Int(max(count, 1)))
        eglChooseConfig(display, attributes, &configs, count, &count)
        var chosen: EGLConfig? = nil
        for candidate in configs.prefix(Int(count)) {
            guard let candidate else { continue }
            if let nativeVisual {
                // GBM needs the config whose native visual is the surface's format.
                var visual: EGLint = 0
                eglGetConfigAttrib(display, candidate, EGL_NATIVE_VISUAL_ID, &visual)
                if UInt32(bitPattern: visual) != nativeVisual { continue }
            }
            chosen = candidate
            break
        }
        guard let chosen else {
            releaseDisplay(display)
            throw .egl("finding an RGB888 GLES config", eglGetError())
        }
        var context: EGLContext? = nil
        var version = 3
        // VITRINE_GLES_VERSION=2 keeps a GLES 3 driver to the GLES 2 paths (to check them).
        var limit = maximumVersion
        if let value = getenv("VITRINE_GLES_VERSION"), let number = Int(String(cString: value)) { limit = min(limit, number) }
        for candidateVersion in [3, 2] where candidateVersion <= limit {
            let contextAttributes: [EGLint] = [EGL_CONTEXT_MAJOR_VERSION, EGLint(candidateVersion), EGL_NONE]
            context = eglCreateContext(display, chosen, vitrine_egl_no_context(), contextAttributes)
            if let context, context != vitrine_egl_no_context() {
                version = candidateVersion
                break
            }
        }
        guard let context, context != vitrine_egl_no_context() else {
            releaseDisplay(display)
            throw .egl("creating a GLES context", eglGetError())
        }
        var surface: EGLSurface? = vitrine_egl_no_surface()
        if let makeSurface {
            guard let made = makeSurface(display, chosen), made != vitrine_egl_no_surface() else {
                let code = eglGetError()
                eglDestroyContext(display, context)
                releaseDisplay(display)
                throw .egl("creating the window surface", code)
            }
            surface = made
        }
        guard eglMakeCurrent(display, surface, surface, context) == EGL_TRUE else {
            let code = eglGetError()
            eglDestroyContext(display, context)
            releaseDisplay(display)
            throw .egl("making the context current", code)
        }
        self.display = display
        self.context = context
        self.surface = surface
        self.config = chosen
        self.glesMajorVersion = version
        self.terminatesDisplay = surfaceType != EGL_PBUFFER_BIT
    }

    /// Presents the window surface's back buffer (GBM only). The corresponding C function is `eglSwapBuffers`.
    func swapBuffers() throws(DisplayError) {
        guard eglSwapBuffers(display, surface) == EGL_TRUE else { throw .egl("eglSwapBuffers", eglGetError()) }
    }

    /// The GL renderer's name (llvmpipe, a GPU driver).
    var rendererName: String {
        guard let name = glGetString(GLenum(GL_RENDERER)) else { return "unknown" }
        return String(cString: name)
    }

    /// Releases the context and surface and terminates the display. Call on the owning thread.
    func destroy() {
        eglMakeCurrent(display, vitrine_egl_no_surface(), vitrine_egl_no_surface(), vitrine_egl_no_context())
        if surface != vitrine_egl_no_surface() { eglDestroySurface(display, surface) }
        surface = vitrine_egl_no_surface()
        eglDestroyContext(display, context)
        releaseDisplay(display, terminate: terminatesDisplay)
        eglReleaseThread()
    }
}
