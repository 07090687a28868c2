// Tests for Schedule live in this folder, one file per behaviour.
