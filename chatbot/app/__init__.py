"""Start-up, wiring and serving: configuration in, a running bot (or one CLI command) out."""
