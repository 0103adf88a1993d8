"""The bottom of the service: the PostgreSQL server and engine, the models, the recording
of a run and the database's fault ledger. Imports nothing else of the service."""
