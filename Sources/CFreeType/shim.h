// FreeType for Swift (the text overlay's glyph rasteriser).
#ifndef VITRINE_CFREETYPE_SHIM_H
#define VITRINE_CFREETYPE_SHIM_H
#include <ft2build.h>
#include FT_FREETYPE_H
static inline FT_Int32 vitrine_ft_load_render(void) { return FT_LOAD_RENDER; }
static inline FT_Int32 vitrine_ft_load_default(void) { return FT_LOAD_DEFAULT; }
#endif
