// libdrm (DRM/KMS) and GBM for Swift.
#ifndef VITRINE_CDRM_SHIM_H
#define VITRINE_CDRM_SHIM_H
#include <stdint.h>
#include <xf86drm.h>
#include <xf86drmMode.h>
#include <drm_fourcc.h>
#include <gbm.h>

static inline uint32_t vitrine_drm_mode_page_flip_event(void) { return DRM_MODE_PAGE_FLIP_EVENT; }
static inline uint32_t vitrine_drm_mode_atomic_allow_modeset(void) { return DRM_MODE_ATOMIC_ALLOW_MODESET; }
static inline uint32_t vitrine_drm_mode_atomic_nonblock(void) { return DRM_MODE_ATOMIC_NONBLOCK; }
static inline uint32_t vitrine_drm_mode_type_preferred(void) { return DRM_MODE_TYPE_PREFERRED; }
static inline uint32_t vitrine_drm_mode_object_crtc(void) { return DRM_MODE_OBJECT_CRTC; }
static inline uint32_t vitrine_drm_mode_object_connector(void) { return DRM_MODE_OBJECT_CONNECTOR; }
static inline uint32_t vitrine_drm_mode_object_plane(void) { return DRM_MODE_OBJECT_PLANE; }
static inline uint32_t vitrine_drm_plane_type_primary(void) { return DRM_PLANE_TYPE_PRIMARY; }
static inline uint32_t vitrine_drm_client_cap_atomic(void) { return DRM_CLIENT_CAP_ATOMIC; }
static inline uint32_t vitrine_drm_client_cap_universal_planes(void) { return DRM_CLIENT_CAP_UNIVERSAL_PLANES; }
static inline uint32_t vitrine_gbm_bo_use_scanout(void) { return GBM_BO_USE_SCANOUT; }
static inline uint32_t vitrine_gbm_bo_use_rendering(void) { return GBM_BO_USE_RENDERING; }
static inline uint32_t vitrine_gbm_format_xrgb8888(void) { return GBM_FORMAT_XRGB8888; }
#endif
