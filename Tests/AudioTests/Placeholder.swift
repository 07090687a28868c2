// Tests for Audio live in this folder, one file per behaviour.
