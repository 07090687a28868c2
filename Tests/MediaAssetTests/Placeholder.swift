// Tests for MediaAsset live in this folder, one file per behaviour.
