// Tests for Display live in this folder, one file per behaviour.
