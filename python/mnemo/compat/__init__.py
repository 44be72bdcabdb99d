"""Drop-in replacements for the memory APIs of the systems mnemo's design comes from."""
