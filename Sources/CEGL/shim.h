// EGL and OpenGL ES 2/3 for Swift. EGL_NO_* and EGL_DEFAULT_DISPLAY are casts
// Swift cannot import, so they are wrapped here, as are extension entry points.
#ifndef VITRINE_CEGL_SHIM_H
#define VITRINE_CEGL_SHIM_H
#define EGL_EGLEXT_PROTOTYPES 1
#define GL_GLEXT_PROTOTYPES 1
#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <GLES2/gl2.h>
#include <GLES2/gl2ext.h>
#include <GLES3/gl3.h>

static inline EGLDisplay vitrine_egl_no_display(void) { return EGL_NO_DISPLAY; }
static inline EGLContext vitrine_egl_no_context(void) { return EGL_NO_CONTEXT; }
static inline EGLSurface vitrine_egl_no_surface(void) { return EGL_NO_SURFACE; }

/// eglGetPlatformDisplayEXT, looked up at run time (it is an extension entry point).
static inline EGLDisplay vitrine_egl_get_platform_display(EGLenum platform, void *nativeDisplay, const EGLint *attributes) {
    PFNEGLGETPLATFORMDISPLAYEXTPROC get =
        (PFNEGLGETPLATFORMDISPLAYEXTPROC)eglGetProcAddress("eglGetPlatformDisplayEXT");
    if (!get) return EGL_NO_DISPLAY;
    return get(platform, nativeDisplay, attributes);
}
#endif
