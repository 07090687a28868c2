// Schedule: see DESIGN.md's module table.
