// Display: the GLES compositor, the KMS display and the headless display (DESIGN.md).
internal import CDRM
internal import CEGL
internal import CFreeType
