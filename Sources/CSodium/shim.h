// libsodium for Swift: Ed25519 signatures, BLAKE2b and SHA-256 for minisign signatures and bundle manifests.
#ifndef VITRINE_CSODIUM_SHIM_H
#define VITRINE_CSODIUM_SHIM_H
#include <sodium.h>
static inline int vitrine_sodium_base64_original(void) { return sodium_base64_VARIANT_ORIGINAL; }
#endif
