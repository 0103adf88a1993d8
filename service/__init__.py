"""The service: models, embedded database, Chaos Toolkit control, analysis, CLI and web app."""
