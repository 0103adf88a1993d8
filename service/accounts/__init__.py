"""Users, their roles and their API tokens, their dashboard sessions, failed logins, and the
audit trail (all stored in PostgreSQL).

`services` is the package's surface for users and tokens (views and the CLI call it, never
the models directly); `sessions` keeps dashboard sessions, `throttle` counts failed logins,
`audit` records and reads who changed what.
"""
