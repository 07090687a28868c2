// Audio: the ALSA output, mixing, AudioPlayer and the audio session (DESIGN.md).
internal import CALSA
