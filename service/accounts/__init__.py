"""Users, their roles and their API tokens (stored in PostgreSQL).

`services` is the package's surface: views and the CLI call it, never the models directly.
"""
