"""The project as a whole: its docs, its package, its architecture, its limits."""
