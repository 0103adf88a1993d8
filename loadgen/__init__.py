"""The steady load: workload model, open-loop engine, drivers, samples, integrity ledger."""
