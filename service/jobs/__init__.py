"""The job queue seen from whoever defers a job: queue and task names, the per-cluster lock,
deferring and cancelling runs and heals. The worker that runs the jobs is service.worker."""
