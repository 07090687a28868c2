// Tests for Playback live in this folder, one file per behaviour.
