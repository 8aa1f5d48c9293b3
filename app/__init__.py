"""WhisperKV Studio desktop app: PySide6 windows, panels and plots over the core and device packages."""
