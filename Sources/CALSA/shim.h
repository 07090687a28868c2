// alsa-lib for Swift.
#ifndef VITRINE_CALSA_SHIM_H
#define VITRINE_CALSA_SHIM_H
#include <alsa/asoundlib.h>
static inline int vitrine_snd_pcm_nonblock(void) { return SND_PCM_NONBLOCK; }
#endif
