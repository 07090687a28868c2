// Tests for VitrineCLI live in this folder, one file per behaviour.
